import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.TopologyDescriber;
import org.apache.kafka.coordinator.group.streams.assignor.AssignmentConfigsImpl;
import org.apache.kafka.coordinator.group.streams.assignor.GroupSpecImpl;
import org.apache.kafka.coordinator.group.streams.assignor.MemberMetadataAndStateImpl;
import org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Kafka's broker-side StickyTaskAssignor on inputs read from stdin, one JSON object a line:
 *
 * <pre>
 * {"members": [{"memberId": "m1", "processId": "p1", "rackId": null, "instanceId": null,
 *               "clientTags": {}, "active": {"0": [0, 1]}, "standby": {}, "warmup": {},
 *               "taskOffsets": {"0": {"2": 100}}, "taskEndOffsets": {}}, ...],
 *  "subtopologies": [{"id": "0", "partitions": 6, "stateful": true}, ...],
 *  "numStandbyReplicas": 1, "rackAwareAssignmentTags": []}
 * </pre>
 *
 * The members go into a HashMap in the order given (as the coordinator's TargetAssignmentBuilder
 * fills one), so the assignor iterates them in that HashMap's order. Prints one line per input:
 * {"members": {"m1": {"active": {"0": [0, 1]}, "standby": {}}, ...}} with sorted keys and
 * partitions, or {"error": "<exception class>: <message>"}.
 */
public class StreamsAssignorOracle {
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

    private static ObjectNode run(JsonNode input) {
        ObjectNode result = JSON.createObjectNode();
        try {
            Map<String, MemberMetadataAndStateImpl> members = new HashMap<>();
            for (JsonNode m : input.path("members")) {
                members.put(m.get("memberId").asText(), member(m));
            }
            List<String> tags = new ArrayList<>();
            input.path("rackAwareAssignmentTags").forEach(t -> tags.add(t.asText()));
            AssignmentConfigsImpl configs = new AssignmentConfigsImpl(input.path("numStandbyReplicas").asInt(0), tags);
            GroupAssignment assignment = new StickyTaskAssignor()
                .assign(new GroupSpecImpl(members, configs), topology(input.path("subtopologies")));
            ObjectNode byMember = result.putObject("members");
            for (Map.Entry<String, MemberAssignment> e : new TreeMap<>(assignment.members()).entrySet()) {
                ObjectNode tasks = byMember.putObject(e.getKey());
                tasks.set("active", tasksJson(e.getValue().activeTasks()));
                tasks.set("standby", tasksJson(e.getValue().standbyTasks()));
            }
        } catch (Exception e) {
            result = JSON.createObjectNode();
            result.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
        }
        return result;
    }

    private static MemberMetadataAndStateImpl member(JsonNode m) {
        Map<String, String> clientTags = new HashMap<>();
        m.path("clientTags").fields().forEachRemaining(e -> clientTags.put(e.getKey(), e.getValue().asText()));
        return new MemberMetadataAndStateImpl(
            optional(m.path("instanceId")),
            optional(m.path("rackId")),
            m.get("processId").asText(),
            clientTags,
            tasks(m.path("active")),
            tasks(m.path("standby")),
            tasks(m.path("warmup")),
            offsets(m.path("taskOffsets")),
            offsets(m.path("taskEndOffsets")));
    }

    private static Optional<String> optional(JsonNode n) {
        return n.isMissingNode() || n.isNull() ? Optional.empty() : Optional.of(n.asText());
    }

    private static Map<String, Set<Integer>> tasks(JsonNode n) {
        Map<String, Set<Integer>> tasks = new HashMap<>();
        n.fields().forEachRemaining(e -> {
            Set<Integer> partitions = new HashSet<>();
            e.getValue().forEach(p -> partitions.add(p.asInt()));
            tasks.put(e.getKey(), partitions);
        });
        return tasks;
    }

    private static Map<String, Map<Integer, Long>> offsets(JsonNode n) {
        Map<String, Map<Integer, Long>> offsets = new HashMap<>();
        n.fields().forEachRemaining(e -> {
            Map<Integer, Long> byPartition = new HashMap<>();
            e.getValue().fields().forEachRemaining(p -> byPartition.put(Integer.parseInt(p.getKey()), p.getValue().asLong()));
            offsets.put(e.getKey(), byPartition);
        });
        return offsets;
    }

    /** As the coordinator's TopologyMetadata: subtopologies in sorted id order. */
    private static TopologyDescriber topology(JsonNode subtopologies) {
        TreeMap<String, int[]> subs = new TreeMap<>();   // id -> {partitions, stateful}
        for (JsonNode s : subtopologies) {
            subs.put(s.get("id").asText(), new int[] {s.get("partitions").asInt(), s.path("stateful").asBoolean() ? 1 : 0});
        }
        return new TopologyDescriber() {
            @Override
            public List<String> subtopologies() {
                return List.copyOf(subs.keySet());
            }

            @Override
            public int maxNumInputPartitions(String id) {
                return get(id)[0];
            }

            @Override
            public boolean isStateful(String id) {
                return get(id)[1] == 1;
            }

            private int[] get(String id) {
                int[] s = subs.get(id);
                if (s == null) {
                    throw new NoSuchElementException("Topology does not contain subtopology " + id);
                }
                return s;
            }
        };
    }

    private static ObjectNode tasksJson(Map<String, Set<Integer>> tasks) {
        ObjectNode node = JSON.createObjectNode();
        for (Map.Entry<String, Set<Integer>> e : new TreeMap<>(tasks).entrySet()) {
            if (e.getValue().isEmpty()) {
                continue;
            }
            ArrayNode partitions = node.putArray(e.getKey());
            for (Iterator<Integer> it = new TreeSet<>(e.getValue()).iterator(); it.hasNext(); ) {
                partitions.add(it.next());
            }
        }
        return node;
    }
}
