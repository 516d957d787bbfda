package dev.impipe.ack.push;

import dev.impipe.avro.InboxEntry;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/** A {@link DeviceChannel} held in memory: devices connect by name, pushes are recorded per device (tests, demos). */
public final class InMemoryDeviceChannel implements DeviceChannel {

  /** One push as a device saw it. */
  public record Push(String userId, String deviceId, long seq, InboxEntry entry) {}

  private final Map<String, Set<String>> connected = new ConcurrentHashMap<>();
  private final Map<String, List<Push>> pushes = new ConcurrentHashMap<>();
  private final List<Consumer<Push>> listeners = new CopyOnWriteArrayList<>();

  public InMemoryDeviceChannel connect(String userId, String deviceId) {
    connected.computeIfAbsent(userId, u -> ConcurrentHashMap.newKeySet()).add(deviceId);
    return this;
  }

  public InMemoryDeviceChannel disconnect(String userId, String deviceId) {
    Set<String> devices = connected.get(userId);
    if (devices != null) {
      devices.remove(deviceId);
    }
    return this;
  }

  /** Calls {@code listener} on every push, on the worker's thread (e.g. a client that ACKs at once). */
  public InMemoryDeviceChannel onPush(Consumer<Push> listener) {
    listeners.add(listener);
    return this;
  }

  @Override
  public Collection<String> connectedDevices(String userId) {
    Set<String> devices = connected.get(userId);
    return devices == null ? List.of() : List.copyOf(devices);
  }

  @Override
  public boolean push(String userId, String deviceId, long seq, InboxEntry entry) {
    Set<String> devices = connected.get(userId);
    if (devices == null || !devices.contains(deviceId)) {
      return false;
    }
    Push push = new Push(userId, deviceId, seq, entry);
    pushes.computeIfAbsent(key(userId, deviceId), k -> new CopyOnWriteArrayList<>()).add(push);
    listeners.forEach(l -> l.accept(push));
    return true;
  }

  /** What one device received so far, in push order. */
  public List<Push> pushes(String userId, String deviceId) {
    return new ArrayList<>(pushes.getOrDefault(key(userId, deviceId), List.of()));
  }

  private static String key(String userId, String deviceId) {
    return userId.length() + ":" + userId + "/" + deviceId;
  }
}
