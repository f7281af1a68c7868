"""ACLs and the authorizer, with Kafka's model (KIP-11, KIP-290 prefixed patterns; rules of
`StandardAuthorizer`/`AclAuthorizer`).

An ACL binds a resource pattern (type, name, LITERAL or PREFIXED) to an entry (principal,
host, operation, ALLOW or DENY). A request is allowed when some ALLOW ACL matches and no
DENY ACL does: DENY wins. ALLOW of READ, WRITE, DELETE or ALTER implies DESCRIBE, ALLOW of
ALTER_CONFIGS implies DESCRIBE_CONFIGS, ALL implies everything (a DENY of DESCRIBE denies
only DESCRIBE). "User:*" matches every principal, "*" every host, the LITERAL name "*"
every resource. With no ACL on a resource, only `allow_everyone_if_no_acl_found` or a
super user gets in — as Kafka's `allow.everyone.if.no.acl.found` (default false).

    acls = Authorizer()
    acls.allow("User:alice", "GROUP", "app-", "READ", pattern="PREFIXED")
    acls.authorize("User:alice", "READ", "GROUP", "app-1")        # True
    acls.authorize("User:alice", "DESCRIBE", "GROUP", "app-1")    # True (implied by READ)

The ACLs live in the simulated cluster (`Cluster.authorizer`); a coordinator checks them only
when built with `Coordinator(..., authorizer=True)` (or an `Authorizer` of its own).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass

ANONYMOUS = "User:ANONYMOUS"
#: the principal the simulated brokers use between themselves (the share-partition leader's
#: persister calling the share coordinator): a super user, as Kafka's inter-broker principal
#: usually is
BROKER_PRINCIPAL = "User:kgroup-broker"
WILDCARD = "*"
WILDCARD_PRINCIPAL = "User:*"
CLUSTER_NAME = "kafka-cluster"


class AclOperation(enum.IntEnum):
    """Kafka's `AclOperation` codes (the bit numbers of the authorized-operations bitfield)."""

    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


class ResourceType(enum.IntEnum):
    """Kafka's `ResourceType` codes (the resource types kgroup's APIs name)."""

    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5


class PatternType(enum.IntEnum):
    LITERAL = 3
    PREFIXED = 4


class Permission(enum.IntEnum):
    DENY = 2
    ALLOW = 3


Op = AclOperation

#: operations an ALLOW of the key also grants (StandardAuthorizerData's implied operations)
_IMPLIED: dict[AclOperation, frozenset[AclOperation]] = {
    Op.DESCRIBE: frozenset({Op.DESCRIBE, Op.READ, Op.WRITE, Op.DELETE, Op.ALTER}),
    Op.DESCRIBE_CONFIGS: frozenset({Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS}),
}

#: operations that apply to each resource type (`AclEntry.supportedOperations`): the bits an
#: authorized-operations field can hold
SUPPORTED_OPERATIONS: dict[ResourceType, tuple[AclOperation, ...]] = {
    ResourceType.TOPIC: (Op.READ, Op.WRITE, Op.CREATE, Op.DESCRIBE, Op.DELETE, Op.ALTER, Op.DESCRIBE_CONFIGS,
                         Op.ALTER_CONFIGS),
    ResourceType.GROUP: (Op.READ, Op.DESCRIBE, Op.DELETE, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS),
    ResourceType.CLUSTER: (Op.CREATE, Op.CLUSTER_ACTION, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS, Op.IDEMPOTENT_WRITE,
                           Op.ALTER, Op.DESCRIBE, Op.CREATE_TOKENS, Op.DESCRIBE_TOKENS),
    ResourceType.TRANSACTIONAL_ID: (Op.DESCRIBE, Op.WRITE),
}

#: what a describe response carries when the authorized operations were not asked for
AUTHORIZED_OPERATIONS_OMITTED = -2147483648


def _enum(cls, value):
    return value if isinstance(value, cls) else cls[str(value).upper()]


@dataclass(frozen=True)
class AclBinding:
    """One ACL: a resource pattern and an access-control entry."""

    principal: str
    resource_type: ResourceType
    name: str
    operation: AclOperation
    permission: Permission = Permission.ALLOW
    pattern: PatternType = PatternType.LITERAL
    host: str = WILDCARD

    def matches_resource(self, resource_type: ResourceType, name: str) -> bool:
        if self.resource_type != resource_type:
            return False
        if self.pattern is PatternType.PREFIXED:
            return name.startswith(self.name)
        return self.name == WILDCARD or self.name == name

    def matches_entry(self, principal: str, host: str) -> bool:
        return (self.principal in (principal, WILDCARD_PRINCIPAL)) and self.host in (host, WILDCARD)

    def __str__(self) -> str:
        return (f"{self.permission.name} {self.principal} {self.operation.name} on {self.resource_type.name}:"
                f"{self.pattern.name}:{self.name} from {self.host}")


class Authorizer:
    """The cluster's ACLs and Kafka's rules for deciding with them."""

    def __init__(self, *, super_users: tuple[str, ...] = (BROKER_PRINCIPAL,),
                 allow_everyone_if_no_acl_found: bool = False) -> None:
        self.acls: list[AclBinding] = []
        self.super_users = set(super_users)
        self.allow_everyone_if_no_acl_found = allow_everyone_if_no_acl_found

    # -- managing ACLs (CreateAcls / DeleteAcls) ---------------------------------------
    def add(self, principal: str, resource_type: str | ResourceType, name: str, operation: str | AclOperation,
            permission: str | Permission = Permission.ALLOW, *, pattern: str | PatternType = PatternType.LITERAL,
            host: str = WILDCARD) -> AclBinding:
        """Add one ACL (idempotent, as CreateAcls is)."""
        if resource_type in ("CLUSTER", ResourceType.CLUSTER) and not name:
            name = CLUSTER_NAME
        acl = AclBinding(principal, _enum(ResourceType, resource_type), name, _enum(AclOperation, operation),
                         _enum(Permission, permission), _enum(PatternType, pattern), host)
        if acl.operation in (Op.ANY, Op.UNKNOWN):
            raise ValueError(f"an ACL cannot name operation {acl.operation.name}")
        if acl not in self.acls:
            self.acls.append(acl)
        return acl

    def allow(self, principal: str, resource_type: str | ResourceType, name: str, operation: str | AclOperation,
              **kw) -> AclBinding:
        return self.add(principal, resource_type, name, operation, Permission.ALLOW, **kw)

    def deny(self, principal: str, resource_type: str | ResourceType, name: str, operation: str | AclOperation,
             **kw) -> AclBinding:
        return self.add(principal, resource_type, name, operation, Permission.DENY, **kw)

    def remove(self, acl: AclBinding) -> None:
        self.acls.remove(acl)

    # -- deciding ---------------------------------------------------------------------
    def authorize(self, principal: str, operation: str | AclOperation, resource_type: str | ResourceType,
                  name: str, host: str = WILDCARD) -> bool:
        """Whether `principal` (from `host`) may do `operation` on the resource."""
        op, rt = _enum(AclOperation, operation), _enum(ResourceType, resource_type)
        if principal in self.super_users:
            return True
        matching = [a for a in self.acls if a.matches_resource(rt, name)]
        if not matching:
            return self.allow_everyone_if_no_acl_found
        mine = [a for a in matching if a.matches_entry(principal, host)]
        # DENY wins; a DENY names the operation itself or ALL (it implies nothing else)
        if any(a.permission is Permission.DENY and a.operation in (op, Op.ALL) for a in mine):
            return False
        granting = _IMPLIED.get(op, frozenset({op})) | {Op.ALL}
        return any(a.permission is Permission.ALLOW and a.operation in granting for a in mine)

    def authorized_operations(self, principal: str, resource_type: str | ResourceType, name: str,
                              host: str = WILDCARD) -> int:
        """Kafka's authorized-operations bitfield: bit `op` set for each supported operation
        the principal may do on the resource."""
        rt = _enum(ResourceType, resource_type)
        bits = 0
        for op in SUPPORTED_OPERATIONS[rt]:
            if self.authorize(principal, op, rt, name, host):
                bits |= 1 << op
        return bits

    def __repr__(self) -> str:
        return f"Authorizer({len(self.acls)} ACLs)"


def operations_of(bits: int) -> set[AclOperation]:
    """The operations an authorized-operations bitfield holds (as the Admin client reads it)."""
    if bits == AUTHORIZED_OPERATIONS_OMITTED:
        return set()
    return {op for op in AclOperation if bits & (1 << op)}


__all__ = ["AclBinding", "AclOperation", "Authorizer", "PatternType", "Permission", "ResourceType",
           "AUTHORIZED_OPERATIONS_OMITTED", "ANONYMOUS", "BROKER_PRINCIPAL", "CLUSTER_NAME", "operations_of"]
