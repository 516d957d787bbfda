package dev.impipe.ingest;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.MembershipOp;
import dev.impipe.avro.MessageType;
import dev.impipe.avro.ScheduleCommand;
import dev.impipe.delay.ScheduledMessages;
import dev.impipe.runtime.domain.Ids;
import dev.impipe.runtime.topics.ImTopics;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Instant;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The producer-side Java API: validates, assigns ids, computes conversation ids and publishes with an idempotent
 * producer ({@code acks=all}). Each call publishes exactly one record, so a call either happens or not; the future
 * completes when Kafka has acknowledged it.
 *
 * <p>The message id is derived from (sender, clientMsgId), so a client that retries a send gets the same id back
 * and fan-out delivers it once.
 */
public final class MessagePublisher implements AutoCloseable {

  private final ImTopics topics;
  private final IngestConfig config;
  private final Clock clock;
  private final Producer<String, byte[]> producer;
  private final ScheduledMessages scheduled;

  public MessagePublisher(ImTopics topics, Map<String, Object> clientProperties, IngestConfig config, Clock clock) {
    this(topics, config, clock, new KafkaProducer<>(producerProperties(clientProperties, config),
        new StringSerializer(), new ByteArraySerializer()));
  }

  /** For tests: any producer (e.g. a MockProducer). */
  public MessagePublisher(ImTopics topics, IngestConfig config, Clock clock, Producer<String, byte[]> producer) {
    this.topics = topics;
    this.config = config;
    this.clock = clock;
    this.producer = producer;
    this.scheduled = new ScheduledMessages(topics);
  }

  static Map<String, Object> producerProperties(Map<String, Object> client, IngestConfig config) {
    Map<String, Object> props = new HashMap<>(client);
    props.put(ProducerConfig.ACKS_CONFIG, "all");
    props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    int timeout = (int) config.publishTimeout().toMillis();
    props.putIfAbsent(ProducerConfig.MAX_BLOCK_MS_CONFIG, timeout / 2);
    props.putIfAbsent(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, timeout / 2);
    props.putIfAbsent(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, timeout);
    props.putIfAbsent(ProducerConfig.LINGER_MS_CONFIG, 1);
    return props;
  }

  /** Exposes the producer's client metrics (request rates, errors, batch sizes) on {@code registry}. */
  public AutoCloseable bindMetrics(io.micrometer.core.instrument.MeterRegistry registry) {
    io.micrometer.core.instrument.binder.kafka.KafkaClientMetrics metrics =
        new io.micrometer.core.instrument.binder.kafka.KafkaClientMetrics(producer);
    metrics.bindTo(registry);
    return metrics;
  }

  /** Sends a direct or group message, now or at {@code deliverAt}. */
  public CompletableFuture<Accepted> send(SendRequest request) {
    requireId("senderId", request.senderId());
    optionalId("senderDeviceId", request.senderDeviceId());
    requireId("clientMsgId", request.clientMsgId());
    if (request.body() == null || request.body().isEmpty()) {
      throw new InvalidRequestException("body is required");
    }
    if (request.body().length() > config.maxBodyChars()) {
      throw new InvalidRequestException("body has " + request.body().length() + " characters, at most "
          + config.maxBodyChars() + " are allowed");
    }
    Instant now = clock.instant();
    if (request.deliverAt() != null) {
      if (!request.deliverAt().isAfter(now)) {
        throw new InvalidRequestException("deliverAt " + request.deliverAt() + " is not in the future");
      }
      if (request.deliverAt().isAfter(now.plus(config.maxDelay()))) {
        throw new InvalidRequestException("deliverAt " + request.deliverAt() + " is further away than the maximum "
            + "delay of " + config.maxDelay().toDays() + " days");
      }
    }
    ChatMessage.Builder message = conversation(request.senderId(), request.to(), request.groupId());
    message.setMessageId(messageId(request.senderId(), message.getConversationId(), request.clientMsgId()))
        .setClientMsgId(request.clientMsgId())
        .setType(MessageType.MESSAGE)
        .setSenderId(request.senderId())
        .setSenderDeviceId(request.senderDeviceId())
        .setBody(request.body())
        .setSentAt(request.deliverAt() != null ? request.deliverAt() : now);
    ChatMessage built = message.build();
    if (request.deliverAt() == null) {
      return publish(built);
    }
    return schedule(built, request.deliverAt());
  }

  /** A read marker: {@code readerId} read the conversation up to conversation seq {@code upToSeq}. */
  public CompletableFuture<Accepted> markRead(String readerId, String deviceId, String to, String groupId,
      long upToSeq) {
    requireId("userId", readerId);
    optionalId("deviceId", deviceId);
    if (upToSeq < 0) {
      throw new InvalidRequestException("upToSeq must be >= 0");
    }
    String clientMsgId = UUID.randomUUID().toString();
    ChatMessage.Builder read = conversation(readerId, to, groupId);
    return publish(read.setMessageId(messageId(readerId, read.getConversationId(), clientMsgId))
        .setClientMsgId(clientMsgId)
        .setType(MessageType.READ).setSenderId(readerId).setSenderDeviceId(deviceId)
        .setReadUpToSeq(upToSeq).setSentAt(clock.instant()).build());
  }

  /** Withdraws message {@code messageId}; fan-out honours it only from the original sender. */
  public CompletableFuture<Accepted> recall(String senderId, String deviceId, String to, String groupId,
      String messageId) {
    requireId("senderId", senderId);
    optionalId("deviceId", deviceId);
    if (messageId == null || messageId.isBlank() || messageId.length() > Ids.MAX_LENGTH) {
      throw new InvalidRequestException("messageId is required");
    }
    String clientMsgId = UUID.randomUUID().toString();
    ChatMessage.Builder recall = conversation(senderId, to, groupId);
    return publish(recall.setMessageId(messageId(senderId, recall.getConversationId(), clientMsgId))
        .setClientMsgId(clientMsgId)
        .setType(MessageType.RECALL).setSenderId(senderId).setSenderDeviceId(deviceId)
        .setRefMessageId(messageId).setSentAt(clock.instant()).build());
  }

  /**
   * An operator's JOIN: applied by the fan-out without the group rules. Requests of users go through
   * {@link #join(String, String, String)}.
   */
  public CompletableFuture<Void> join(String groupId, String userId) {
    return join(null, groupId, userId);
  }

  /** An operator's LEAVE: applied without the group rules. Requests of users: {@link #leave(String, String, String)}. */
  public CompletableFuture<Void> leave(String groupId, String userId) {
    return leave(null, groupId, userId);
  }

  /**
   * {@code actor} asks that {@code userId} join {@code groupId}: the fan-out applies it if the group does not exist
   * yet and the actor joins it themselves (they become its admin), or if the actor is the group's admin; otherwise
   * the actor gets a REJECTED inbox entry. {@code actor} null = an operator (no rules).
   */
  public CompletableFuture<Void> join(String actor, String groupId, String userId) {
    return join(actor, groupId, userId, null);
  }

  /** As {@link #join(String, String, String)}, with the request's id, echoed in a REJECTED entry (may be null). */
  public CompletableFuture<Void> join(String actor, String groupId, String userId, String clientMsgId) {
    return membership(actor, groupId, userId, MembershipOp.JOIN, clientMsgId);
  }

  /**
   * {@code actor} asks that {@code userId} leave {@code groupId}: anyone may leave; only the group's admin removes
   * someone else, otherwise the actor gets a REJECTED inbox entry. {@code actor} null = an operator (no rules).
   */
  public CompletableFuture<Void> leave(String actor, String groupId, String userId) {
    return leave(actor, groupId, userId, null);
  }

  /** As {@link #leave(String, String, String)}, with the request's id, echoed in a REJECTED entry (may be null). */
  public CompletableFuture<Void> leave(String actor, String groupId, String userId, String clientMsgId) {
    return membership(actor, groupId, userId, MembershipOp.LEAVE, clientMsgId);
  }

  /** An operator's cancel of a scheduled message not delivered yet (a no-op if it has been), whoever sent it. */
  public CompletableFuture<Void> cancelScheduled(String messageId) {
    return cancelScheduled(null, messageId);
  }

  /**
   * {@code requester} cancels their scheduled message {@code messageId} (a no-op if it was delivered already). The
   * delay topology honours it only if the requester scheduled it; otherwise the requester gets a REJECTED inbox
   * entry. {@code requester} null = an operator (always honoured).
   */
  public CompletableFuture<Void> cancelScheduled(String requester, String messageId) {
    optionalId("requester", requester);
    if (messageId == null || messageId.isBlank() || messageId.length() > Ids.MAX_LENGTH) {
      throw new InvalidRequestException("messageId is required");
    }
    return publish(scheduled.cancel(requester, messageId, clock.instant()));
  }

  /**
   * The id of the message a sender sends with {@code clientMsgId} to a conversation: the same for every retry, and
   * different in another conversation (the same clientMsgId in two chats is two messages). Ids issued before the
   * conversation was part of the hash ({@link #legacyMessageId}) stay valid: they are stored in the records.
   */
  public static String messageId(String senderId, String conversationId, String clientMsgId) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update((byte) 2); // version: the legacy hash starts with the sender id, never with this byte
      sha.update(senderId.getBytes(StandardCharsets.UTF_8));
      sha.update((byte) 0);
      sha.update(conversationId.getBytes(StandardCharsets.UTF_8));
      sha.update((byte) 0);
      sha.update(clientMsgId.getBytes(StandardCharsets.UTF_8));
      return "m" + HexFormat.of().formatHex(sha.digest(), 0, 15);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The id ingest gave before the conversation was part of it: (sender, clientMsgId) only. */
  public static String legacyMessageId(String senderId, String clientMsgId) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update(senderId.getBytes(StandardCharsets.UTF_8));
      sha.update((byte) 0);
      sha.update(clientMsgId.getBytes(StandardCharsets.UTF_8));
      return "m" + HexFormat.of().formatHex(sha.digest(), 0, 15);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * A user's request ({@code actor} set) is a JOIN / LEAVE control record in {@code im.messages}, keyed by the group
   * like its messages: the group's log is then the one order of its membership and messages, so a message sent after
   * an acknowledged change is fanned out after it whatever the clocks say. The fan-out applies the group rules there
   * and writes the applied change to {@code im.group-members}. An operator's change (no actor) still goes to
   * {@code im.group-members} directly, ordered against messages only by timestamps.
   */
  private CompletableFuture<Void> membership(String actor, String groupId, String userId, MembershipOp op,
      String clientMsgId) {
    optionalId("actor", actor);
    requireId("groupId", groupId);
    requireId("userId", userId);
    optionalId("clientMsgId", clientMsgId);
    Instant now = clock.instant();
    if (actor != null) {
      String requestId = clientMsgId != null ? clientMsgId : UUID.randomUUID().toString();
      ChatMessage control = ChatMessage.newBuilder().setAttributes(Map.of())
          .setConversationType(ConversationType.GROUP).setConversationId(groupId).setGroupId(groupId)
          .setMessageId(messageId(actor, groupId, requestId)).setClientMsgId(requestId)
          .setType(op == MembershipOp.JOIN ? MessageType.JOIN : MessageType.LEAVE)
          .setSenderId(actor).setMemberId(userId).setSentAt(now).build();
      return publish(control).thenApply(x -> null);
    }
    MembershipChange change = MembershipChange.newBuilder().setGroupId(groupId).setUserId(userId).setOp(op)
        .setAt(now).build();
    String topic = topics.groupMembers().name();
    return send(new ProducerRecord<>(topic, null, now.toEpochMilli(), groupId,
        topics.groupMembers().valueSerde().serializer().serialize(topic, change))).thenApply(x -> null);
  }

  private ChatMessage.Builder conversation(String senderId, String to, String groupId) {
    boolean hasTo = to != null && !to.isEmpty();
    boolean hasGroup = groupId != null && !groupId.isEmpty();
    if (hasTo == hasGroup) {
      throw new InvalidRequestException("exactly one of 'to' and 'groupId' is required");
    }
    ChatMessage.Builder builder = ChatMessage.newBuilder().setAttributes(Map.of());
    if (hasTo) {
      requireId("to", to);
      return builder.setConversationType(ConversationType.DIRECT).setConversationId(Ids.direct(senderId, to))
          .setRecipientId(to);
    }
    requireId("groupId", groupId);
    return builder.setConversationType(ConversationType.GROUP).setConversationId(groupId).setGroupId(groupId);
  }

  private CompletableFuture<Accepted> publish(ChatMessage message) {
    String topic = topics.messages().name();
    // Stamped with this publisher's clock (the producer's wall clock in production): each ingest instance's own.
    return send(new ProducerRecord<>(topic, null, clock.millis(), message.getConversationId(),
        topics.messages().valueSerde().serializer().serialize(topic, message)))
        .thenApply(x -> new Accepted(message.getMessageId(), message.getConversationId(), false));
  }

  private CompletableFuture<Accepted> schedule(ChatMessage message, Instant deliverAt) {
    return publish(scheduled.schedule(message, deliverAt))
        .thenApply(x -> new Accepted(message.getMessageId(), message.getConversationId(), true));
  }

  private CompletableFuture<Void> publish(ScheduleCommand command) {
    String topic = topics.delayed().name();
    return send(new ProducerRecord<>(topic, command.getId(),
        topics.delayed().valueSerde().serializer().serialize(topic, command)));
  }

  private CompletableFuture<Void> send(ProducerRecord<String, byte[]> record) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    producer.send(record, (metadata, e) -> {
      if (e != null) {
        done.completeExceptionally(e);
      } else {
        done.complete(null);
      }
    });
    return done;
  }

  private static void requireId(String field, String value) {
    if (value == null || value.isEmpty()) {
      throw new InvalidRequestException(field + " is required");
    }
    if (!Ids.valid(value)) {
      throw new InvalidRequestException(field + " '" + abbreviate(value) + "' is not a valid id: 1-"
          + Ids.MAX_LENGTH + " characters of letters, digits, '.', '_', '-', '@'");
    }
  }

  private static void optionalId(String field, String value) {
    if (value != null && !value.isEmpty()) {
      requireId(field, value);
    }
  }

  private static String abbreviate(String s) {
    return s.length() > 40 ? s.substring(0, 40) + "..." : s;
  }

  @Override
  public void close() {
    producer.close();
  }
}
