import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.coordinator.group.streams.CurrentAssignmentBuilder;
import org.apache.kafka.coordinator.group.streams.MemberState;
import org.apache.kafka.coordinator.group.streams.StreamsGroup;
import org.apache.kafka.coordinator.group.streams.StreamsGroupMember;
import org.apache.kafka.coordinator.group.streams.TasksTuple;
import org.apache.kafka.coordinator.group.streams.TasksTupleWithEpochs;
import org.apache.kafka.timeline.SnapshotRegistry;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Kafka's broker-side streams CurrentAssignmentBuilder on inputs read from stdin, one JSON object
 * a line:
 *
 * <pre>
 * {"member": {"memberId": "A", "processId": "pA", "memberEpoch": 3, "previousMemberEpoch": 2,
 *             "state": "STABLE",
 *             "assigned": {"active": {"0": {"1": 3}}, "standby": {"0": [2]}, "warmup": {}},
 *             "pendingRevocation": {"active": {}, "standby": {}, "warmup": {}}},
 *  "targetEpoch": 4,
 *  "target": {"active": {"0": [1]}, "standby": {}, "warmup": {}},
 *  "activeProcess": {"0": {"1": "pA"}},
 *  "standbyProcesses": {"0": {"2": ["pA"]}}, "warmupProcesses": {},
 *  "owned": {"active": {"0": [1]}, "standby": {}, "warmup": {}}}
 * </pre>
 *
 * Active tasks are given with their assignment epochs (partition -> epoch); {@code owned} may be
 * null (the heartbeat did not report its tasks). The three process maps stand for the group's
 * currentActiveTaskProcessId / currentStandbyTaskProcessIds / currentWarmupTaskProcessIds.
 * Prints one line per input: the resulting member in the same shape (plus {@code "same": true}
 * when the builder returned the very member it was given), or {"error": "<class>: <message>"}.
 * Keys and partitions are printed sorted; a subtopology entry is printed even when its set is
 * empty, so such an entry would show.
 *
 * <p>A line {"ownership": [{"update": member}, {"remove": "A"}, ...], "tasks": [["0", 1], ...]}
 * instead applies those member updates and removals to a StreamsGroup (members in the shape
 * above) and prints, per task asked about, {"0_1": {"active": "pA" or null, "standby": [...],
 * "warmup": [...]}}: what currentActiveTaskProcessId and friends answer afterwards.
 */
public class StreamsReconciliationOracle {
    private static final ObjectMapper JSON = new ObjectMapper();

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            out.println(JSON.writeValueAsString(run(JSON.readTree(line))));
        }
        out.flush();
    }

    private static StreamsGroupMember member(JsonNode m) {
        return StreamsGroupMember.Builder.withDefaults(m.get("memberId").asText())
            .setProcessId(m.get("processId").asText())
            .setMemberEpoch(m.get("memberEpoch").asInt())
            .setPreviousMemberEpoch(m.get("previousMemberEpoch").asInt())
            .setState(MemberState.valueOf(m.get("state").asText()))
            .setAssignedTasks(tuplesWithEpochs(m.get("assigned")))
            .setTasksPendingRevocation(tuplesWithEpochs(m.get("pendingRevocation")))
            .build();
    }

    private static ObjectNode ownership(JsonNode input) {
        ObjectNode result = JSON.createObjectNode();
        StreamsGroup group = new StreamsGroup(new LogContext(), new SnapshotRegistry(new LogContext()), "g");
        for (JsonNode op : input.get("ownership")) {
            if (op.has("update")) {
                group.updateMember(member(op.get("update")));
            } else {
                group.removeMember(op.get("remove").asText());
            }
        }
        for (JsonNode task : input.get("tasks")) {
            String s = task.get(0).asText();
            int p = task.get(1).asInt();
            ObjectNode owners = result.putObject(s + "_" + p);
            owners.put("active", group.currentActiveTaskProcessId(s, p));
            var standby = owners.putArray("standby");
            new TreeSet<>(group.currentStandbyTaskProcessIds(s, p)).forEach(standby::add);
            var warmup = owners.putArray("warmup");
            new TreeSet<>(group.currentWarmupTaskProcessIds(s, p)).forEach(warmup::add);
        }
        return result;
    }

    private static ObjectNode run(JsonNode input) {
        if (input.has("ownership")) {
            return ownership(input);
        }
        ObjectNode result = JSON.createObjectNode();
        try {
            StreamsGroupMember member = member(input.get("member"));
            Map<String, Map<Integer, String>> activeProcess = new HashMap<>();
            input.path("activeProcess").fields().forEachRemaining(e -> {
                Map<Integer, String> byPartition = new HashMap<>();
                e.getValue().fields().forEachRemaining(p -> byPartition.put(Integer.parseInt(p.getKey()), p.getValue().asText()));
                activeProcess.put(e.getKey(), byPartition);
            });
            Map<String, Map<Integer, Set<String>>> standbyProcesses = processSets(input.path("standbyProcesses"));
            Map<String, Map<Integer, Set<String>>> warmupProcesses = processSets(input.path("warmupProcesses"));
            JsonNode owned = input.get("owned");
            StreamsGroupMember next = new CurrentAssignmentBuilder(member)
                .withTargetAssignment(input.get("targetEpoch").asInt(), tuples(input.get("target")))
                .withCurrentActiveTaskProcessId((s, p) -> activeProcess.getOrDefault(s, Map.of()).get(p))
                .withCurrentStandbyTaskProcessIds((s, p) -> standbyProcesses.getOrDefault(s, Map.of()).getOrDefault(p, Set.of()))
                .withCurrentWarmupTaskProcessIds((s, p) -> warmupProcesses.getOrDefault(s, Map.of()).getOrDefault(p, Set.of()))
                .withOwnedAssignment(owned == null || owned.isNull() ? null : tuples(owned))
                .build();
            result.put("memberEpoch", next.memberEpoch());
            result.put("previousMemberEpoch", next.previousMemberEpoch());
            result.put("state", next.state().name());
            result.set("assigned", tuplesJson(next.assignedTasks()));
            result.set("pendingRevocation", tuplesJson(next.tasksPendingRevocation()));
            if (next == member) {
                result.put("same", true);
            }
        } catch (Exception e) {
            result = JSON.createObjectNode();
            result.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
        }
        return result;
    }

    private static Map<String, Set<Integer>> taskSets(JsonNode node) {
        Map<String, Set<Integer>> out = new HashMap<>();
        if (node != null) {
            node.fields().forEachRemaining(e -> {
                Set<Integer> partitions = new HashSet<>();
                e.getValue().forEach(p -> partitions.add(p.asInt()));
                out.put(e.getKey(), partitions);
            });
        }
        return out;
    }

    private static TasksTuple tuples(JsonNode node) {
        return new TasksTuple(taskSets(node.get("active")), taskSets(node.get("standby")), taskSets(node.get("warmup")));
    }

    private static TasksTupleWithEpochs tuplesWithEpochs(JsonNode node) {
        Map<String, Map<Integer, Integer>> active = new HashMap<>();
        JsonNode a = node.get("active");
        if (a != null) {
            a.fields().forEachRemaining(e -> {
                Map<Integer, Integer> epochs = new HashMap<>();
                e.getValue().fields().forEachRemaining(p -> epochs.put(Integer.parseInt(p.getKey()), p.getValue().asInt()));
                active.put(e.getKey(), epochs);
            });
        }
        return new TasksTupleWithEpochs(active, taskSets(node.get("standby")), taskSets(node.get("warmup")));
    }

    private static Map<String, Map<Integer, Set<String>>> processSets(JsonNode node) {
        Map<String, Map<Integer, Set<String>>> out = new HashMap<>();
        node.fields().forEachRemaining(e -> {
            Map<Integer, Set<String>> byPartition = new HashMap<>();
            e.getValue().fields().forEachRemaining(p -> {
                Set<String> processes = new HashSet<>();
                p.getValue().forEach(x -> processes.add(x.asText()));
                byPartition.put(Integer.parseInt(p.getKey()), processes);
            });
            out.put(e.getKey(), byPartition);
        });
        return out;
    }

    private static ObjectNode tuplesJson(TasksTupleWithEpochs tasks) {
        ObjectNode out = JSON.createObjectNode();
        ObjectNode active = out.putObject("active");
        for (Map.Entry<String, Map<Integer, Integer>> e : new TreeMap<>(tasks.activeTasksWithEpochs()).entrySet()) {
            ObjectNode epochs = active.putObject(e.getKey());
            for (Map.Entry<Integer, Integer> p : new TreeMap<>(e.getValue()).entrySet()) {
                epochs.put(String.valueOf(p.getKey()), p.getValue());
            }
        }
        out.set("standby", setsJson(tasks.standbyTasks()));
        out.set("warmup", setsJson(tasks.warmupTasks()));
        return out;
    }

    private static ObjectNode setsJson(Map<String, Set<Integer>> tasks) {
        ObjectNode out = JSON.createObjectNode();
        for (Map.Entry<String, Set<Integer>> e : new TreeMap<>(tasks).entrySet()) {
            Iterator<Integer> it = new TreeSet<>(e.getValue()).iterator();
            var partitions = out.putArray(e.getKey());
            while (it.hasNext()) {
                partitions.add(it.next());
            }
        }
        return out;
    }
}
