package dev.impipe.ack.push;

import dev.impipe.avro.InboxEntry;
import java.util.Collection;

/**
 * The connections a push worker holds (WebSocket, long poll, a vendor push service...). The worker asks which of a
 * user's devices are connected and pushes each inbox entry to them; client ACKs come back through
 * {@link PushWorker#acknowledge(String, String, long)}.
 */
public interface DeviceChannel {

  /** The devices of {@code userId} connected to this worker now. */
  Collection<String> connectedDevices(String userId);

  /**
   * Hands one inbox entry to a device's connection.
   *
   * @param seq the entry's sequence id in the user's inbox (its offset), the number the client ACKs
   * @return true if the push went out (a Delivery is recorded and its ACK awaited), false if the device is gone
   */
  boolean push(String userId, String deviceId, long seq, InboxEntry entry);

  /**
   * Hands one entry of a large group's own timeline (read diffusion: written once, {@code #groupId} in the inbox) to
   * the channel, which pushes it to the connected devices of the group's members, as it knows them (from their
   * merged sync). The worker records no Delivery for it: the seq is the group timeline's, not a user's. By default
   * nothing is pushed and the members' devices get it through their merged sync.
   *
   * @param seq the entry's offset in the group's timeline
   */
  default void pushGroupTimeline(String groupId, long seq, InboxEntry entry) {}
}
