package dev.impipe.fanout.internal;

/**
 * The names of the stores and sinks the fan-out processors use, given by the topology (which attaches the stores
 * through its processor suppliers), so the processors do not depend on the topology class.
 */
public record FanoutNames(String membersStore, String groupsStore, String modeSwitchesStore, String clockStore,
    String pastMembersStore, String dedupeStore, String sentStore, String inboxSink, String historySink,
    String groupMembersSink) {}
