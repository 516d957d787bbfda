package dev.impipe.push;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.push.client.DeviceClient;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/** A test device: records every entry it receives, in order, and ACKs each one when {@code autoAck}. */
final class Device implements DeviceClient.Listener {

  final List<JsonNode> entries = new CopyOnWriteArrayList<>();
  final List<String> resyncs = new CopyOnWriteArrayList<>();
  final List<JsonNode> errors = new CopyOnWriteArrayList<>();
  volatile String lastCursor;
  /** How many entries had arrived when the {@code synced} frame came (-1: not yet). */
  volatile int entriesAtSynced = -1;
  volatile int closeCode = -1;
  volatile String closeReason;
  final boolean autoAck;
  DeviceClient client;

  Device(boolean autoAck) {
    this.autoAck = autoAck;
  }

  static Device connect(DeviceClient.Factory factory, URI base, String token, String device, boolean autoAck)
      throws Exception {
    Device d = new Device(autoAck);
    d.client = factory.connect(base, token, device, d).get(30, TimeUnit.SECONDS);
    return d;
  }

  @Override
  public void entry(DeviceClient c, JsonNode entry, String cursor) {
    entries.add(entry);
    lastCursor = cursor;
    if (autoAck) {
      c.ack(cursor);
    }
  }

  @Override
  public void synced(DeviceClient c, String cursor) {
    entriesAtSynced = entries.size();
  }

  @Override
  public void resync(DeviceClient c, String reason) {
    resyncs.add(reason);
  }

  @Override
  public void error(DeviceClient c, JsonNode frame) {
    errors.add(frame);
  }

  @Override
  public void closed(DeviceClient c, int code, String reason) {
    closeReason = reason;
    closeCode = code;
  }

  /** Bodies of the MESSAGE entries received, in order. */
  List<String> bodies() {
    List<String> out = new ArrayList<>();
    for (JsonNode e : entries) {
      if (e.path("type").asText().equals("MESSAGE")) {
        out.add(e.path("body").asText());
      }
    }
    return out;
  }

  List<Long> seqs() {
    List<Long> out = new ArrayList<>();
    entries.forEach(e -> out.add(e.path("seq").asLong()));
    return out;
  }
}
