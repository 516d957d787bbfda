package dev.impipe.runtime.topics;

import org.apache.kafka.common.serialization.Serde;

/** A topic bundled with its key and value serdes, built per instance (no static serde state). */
public record Topic<K, V>(String name, Serde<K> keySerde, Serde<V> valueSerde) {}
