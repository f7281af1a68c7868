/*
 * One Kafka Streams application instance for kgroup's tests and notebooks: an unmodified
 * Kafka Streams client (whatever version is on the classpath) running one of a small family of
 * topologies, reporting what it sees as JSON lines on stdout.
 *
 *   java -cp KAFKA_CLASSPATH:CLASSES StreamsApp topology=stateful bootstrap.servers=... \
 *        application.id=... group.protocol=streams [any StreamsConfig key=value ...]
 *
 * Topologies (topic names get the prefix given as prefix=..., so that runs sharing a broker
 * do not share topics, or are renamed one by one with topic.in=orders and so on; scenarios
 * create and fill them):
 *   stateless    in -> filter -> mapValues -> out
 *   stateful     in -> groupByKey -> count (store "counts", changelog-backed) -> counts-out
 *   join         in -> selectKey -> repartition -> join(table "right") -> joined-out
 *   stateful-v2  stateful, plus a second sub-topology in2 -> out2 (a redeployed application)
 *
 * Reports: {"event":"start"}, {"event":"state","from":..,"to":..},
 *   {"event":"tasks","active":[..],"standby":[..]} whenever the instance's tasks change,
 *   {"event":"processed","count":N} whenever the count moves, {"event":"closed","clean":bool}.
 * Commands on stdin, one per line: "close", "close leave", "close remain" (end of input = "close").
 */
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Repartitioned;

public final class StreamsApp {
    private static final long START = System.currentTimeMillis();
    private static final AtomicLong PROCESSED = new AtomicLong();

    static synchronized void report(String event, String fields) {
        StringBuilder line = new StringBuilder("{\"t\":").append(System.currentTimeMillis() - START)
            .append(",\"event\":\"").append(event).append('"');
        if (!fields.isEmpty()) line.append(',').append(fields);
        System.out.println(line.append('}'));
        System.out.flush();
    }

    static String quote(String s) {
        return '"' + s.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
    }

    static String list(List<String> items) {
        List<String> quoted = new ArrayList<>();
        for (String item : items) quoted.add(quote(item));
        return "[" + String.join(",", quoted) + "]";
    }

    static String prefix = "";
    static final java.util.Map<String, String> RENAMED = new java.util.HashMap<>();

    static String t(String name) {
        return RENAMED.getOrDefault(name, prefix + name);
    }

    static Topology topology(String name) {
        StreamsBuilder builder = new StreamsBuilder();
        Consumed<String, String> strings = Consumed.with(Serdes.String(), Serdes.String());
        Produced<String, String> out = Produced.with(Serdes.String(), Serdes.String());
        switch (name) {
            case "stateless":
                builder.stream(t("in"), strings).peek((k, v) -> PROCESSED.incrementAndGet())
                    .filter((k, v) -> v != null).mapValues(v -> v.toUpperCase()).to(t("out"), out);
                break;
            case "stateful":
            case "stateful-v2":
                builder.stream(t("in"), strings).peek((k, v) -> PROCESSED.incrementAndGet())
                    .groupByKey().count(Materialized.as("counts"))
                    .toStream().mapValues(String::valueOf).to(t("counts-out"), out);
                if (name.equals("stateful-v2")) {
                    builder.stream(t("in2"), strings).peek((k, v) -> PROCESSED.incrementAndGet()).to(t("out2"), out);
                }
                break;
            case "join": {
                KTable<String, String> right = builder.table(t("right"), strings);
                KStream<String, String> left = builder.stream(t("in"), strings)
                    .peek((k, v) -> PROCESSED.incrementAndGet())
                    .selectKey((k, v) -> v == null ? k : v.split(":")[0])
                    .repartition(Repartitioned.with(Serdes.String(), Serdes.String()).withName("by-value"));
                left.join(right, (l, r) -> l + "|" + r).to(t("joined-out"), out);
                break;
            }
            default:
                throw new IllegalArgumentException("unknown topology " + name
                    + " (stateless, stateful, join, stateful-v2)");
        }
        return builder.build();
    }

    static List<String> tasks(KafkaStreams streams, boolean standby) {
        List<String> ids = new ArrayList<>();
        for (ThreadMetadata thread : streams.metadataForLocalThreads()) {
            for (TaskMetadata task : standby ? thread.standbyTasks() : thread.activeTasks()) {
                ids.add(task.taskId().toString());
            }
        }
        Collections.sort(ids);
        return ids;
    }

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        String topologyName = "stateless";
        long reportMs = 100;
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (eq < 0) throw new IllegalArgumentException("expected key=value, got " + arg);
            String key = arg.substring(0, eq), value = arg.substring(eq + 1);
            if (key.equals("topology")) topologyName = value;
            else if (key.equals("prefix")) prefix = value;
            else if (key.startsWith("topic.")) RENAMED.put(key.substring(6), value);
            else if (key.equals("report.ms")) reportMs = Long.parseLong(value);
            else props.put(key, value);
        }
        props.putIfAbsent(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
        props.putIfAbsent(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
        final long every = reportMs;
        KafkaStreams streams = new KafkaStreams(topology(topologyName), props);
        // the listener runs after state() has changed, so "closed" waits for the listener's report
        final java.util.concurrent.CountDownLatch stopped = new java.util.concurrent.CountDownLatch(1);
        streams.setStateListener((to, from) -> {
            report("state", "\"from\":" + quote(from.name()) + ",\"to\":" + quote(to.name()));
            if (to == KafkaStreams.State.NOT_RUNNING || to == KafkaStreams.State.ERROR) stopped.countDown();
        });
        streams.setUncaughtExceptionHandler(e -> {
            report("error", "\"message\":" + quote(String.valueOf(e)));
            return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        report("start", "\"topology\":" + quote(topologyName));
        streams.start();

        Thread watcher = new Thread(() -> {
            List<String> active = null, standby = null;
            long processed = -1;
            while (!Thread.currentThread().isInterrupted()) {
                try {
                    if (streams.state().isRunningOrRebalancing()) {
                        List<String> a = tasks(streams, false), s = tasks(streams, true);
                        if (!a.equals(active) || !s.equals(standby)) {
                            active = a;
                            standby = s;
                            report("tasks", "\"active\":" + list(a) + ",\"standby\":" + list(s));
                        }
                    }
                    long p = PROCESSED.get();
                    if (p != processed) {
                        processed = p;
                        report("processed", "\"count\":" + p);
                    }
                    Thread.sleep(every);
                } catch (InterruptedException e) {
                    return;
                } catch (RuntimeException e) {
                    // metadataForLocalThreads races with a rebalance now and then: look again
                }
            }
        }, "reporter");
        watcher.setDaemon(true);
        watcher.start();

        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String command = in.readLine();
        command = command == null ? "close" : command.trim();
        CloseOptions options = CloseOptions.timeout(Duration.ofSeconds(60));
        if (command.equals("close leave")) {
            options = options.withGroupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP);
        } else if (command.equals("close remain")) {
            options = options.withGroupMembershipOperation(CloseOptions.GroupMembershipOperation.REMAIN_IN_GROUP);
        }
        boolean clean = streams.close(options);
        // the last transition (to NOT_RUNNING) may still be on its way from the closing thread
        stopped.await(10, java.util.concurrent.TimeUnit.SECONDS);
        watcher.interrupt();
        report("closed", "\"clean\":" + clean + ",\"command\":" + quote(command));
        System.exit(0);
    }
}
