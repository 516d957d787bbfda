package dev.impipe.inbox.query;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.query.StateQueryRequest;
import org.apache.kafka.streams.query.StateQueryResult;

/**
 * A {@link KafkaStreams} that is never started and answers interactive queries from a script: {@code store(...)}
 * hands out the object registered for the store's name (or throws what its supplier throws), {@code query(...)}
 * answers with a function of the request. For unit tests of the query shells ({@link InteractiveQueryView},
 * {@link CopiedSeqs#interactive}) without a broker; it counts the lookups.
 */
final class ScriptedStreams extends KafkaStreams {

  private final Map<String, Supplier<Object>> stores = new HashMap<>();
  private Function<StateQueryRequest<?>, StateQueryResult<?>> queries = request -> {
    throw new IllegalStateException("no query scripted");
  };
  int storeLookups;
  Integer lastPartition;
  int queriesAsked;

  ScriptedStreams(Path stateDir) {
    super(topology(), config(stateDir));
  }

  /** One source: Kafka Streams refuses a topology without one; never started, so it reads nothing. */
  private static Topology topology() {
    Topology t = new Topology();
    t.addSource("in", "scripted.in");
    return t;
  }

  private static Properties config(Path stateDir) {
    Properties p = new Properties();
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, "scripted");
    // Never started: no client connects; an address nothing listens on keeps it that way.
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:9");
    p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
    return p;
  }

  ScriptedStreams store(String name, Supplier<Object> store) {
    stores.put(name, store);
    return this;
  }

  ScriptedStreams queries(Function<StateQueryRequest<?>, StateQueryResult<?>> answer) {
    this.queries = answer;
    return this;
  }

  @Override
  @SuppressWarnings("unchecked")
  public <T> T store(StoreQueryParameters<T> parameters) {
    storeLookups++;
    lastPartition = parameters.partition();
    Supplier<Object> store = stores.get(parameters.storeName());
    if (store == null) {
      throw new IllegalStateException("no store " + parameters.storeName() + " scripted");
    }
    return (T) store.get();
  }

  @Override
  @SuppressWarnings("unchecked")
  public <R> StateQueryResult<R> query(StateQueryRequest<R> request) {
    queriesAsked++;
    return (StateQueryResult<R>) queries.apply(request);
  }
}
