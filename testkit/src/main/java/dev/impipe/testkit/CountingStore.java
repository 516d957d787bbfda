package dev.impipe.testkit;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.List;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueStore;

/** A store that records the name of every method called on it, then calls the real one (what a processor reads). */
public final class CountingStore {

  private CountingStore() {}

  /** {@code store}, with each call's method name added to {@code calls} first. */
  @SuppressWarnings("unchecked")
  public static KeyValueStore<Bytes, byte[]> of(KeyValueStore<Bytes, byte[]> store, List<String> calls) {
    return (KeyValueStore<Bytes, byte[]>) Proxy.newProxyInstance(KeyValueStore.class.getClassLoader(),
        new Class<?>[] {KeyValueStore.class}, (proxy, method, args) -> {
          calls.add(method.getName());
          try {
            return method.invoke(store, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }
}
