package dev.impipe.ingest;

import java.time.Instant;

/**
 * A chat message to send: exactly one of {@code to} (direct) and {@code groupId}.
 *
 * @param deliverAt when set, the message is scheduled and delivered at that instant
 */
public record SendRequest(String senderId, String senderDeviceId, String to, String groupId, String body,
    String clientMsgId, Instant deliverAt) {

  public static SendRequest direct(String senderId, String to, String body, String clientMsgId) {
    return new SendRequest(senderId, null, to, null, body, clientMsgId, null);
  }

  public static SendRequest group(String senderId, String groupId, String body, String clientMsgId) {
    return new SendRequest(senderId, null, null, groupId, body, clientMsgId, null);
  }

  public SendRequest fromDevice(String deviceId) {
    return new SendRequest(senderId, deviceId, to, groupId, body, clientMsgId, deliverAt);
  }

  public SendRequest at(Instant when) {
    return new SendRequest(senderId, senderDeviceId, to, groupId, body, clientMsgId, when);
  }
}
