package dev.impipe.ingest;

/** What the pipeline accepted: the message id, its conversation, and whether it waits for a later delivery. */
public record Accepted(String messageId, String conversationId, boolean scheduled) {}
