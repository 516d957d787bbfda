#!/bin/bash
# Starts one Kafka node in KRaft mode. Defaults make a single combined broker+controller; for a cluster give every
# node its KAFKA_NODE_ID, the same KAFKA_CLUSTER_ID and KAFKA_CONTROLLER_QUORUM_VOTERS. Any other KAFKA_CFG_* variable
# becomes a server property (KAFKA_CFG_MIN_INSYNC_REPLICAS=2 -> min.insync.replicas=2).
#   KAFKA_NODE_ID                    default 1
#   KAFKA_PROCESS_ROLES              default broker,controller
#   KAFKA_LISTENERS                  default PLAINTEXT://0.0.0.0:9092,CONTROLLER://0.0.0.0:9093
#   KAFKA_ADVERTISED_LISTENERS       default PLAINTEXT://$(hostname):9092
#   KAFKA_LISTENER_SECURITY_PROTOCOL_MAP default CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
#   KAFKA_CONTROLLER_QUORUM_VOTERS   default ${KAFKA_NODE_ID}@localhost:9093
#   KAFKA_CLUSTER_ID                 default a fixed id (set your own for a real cluster)
#   KAFKA_REPLICATION_FACTOR         internal topics' replication (default 1, min ISR = 1 when 1, else 2)
#   KAFKA_HEAP_OPTS                  default -Xmx512m
set -euo pipefail
DATA=/var/lib/kafka/data
NODE_ID="${KAFKA_NODE_ID:-1}"
RF="${KAFKA_REPLICATION_FACTOR:-1}"
MIN_ISR=$([ "$RF" -gt 1 ] && echo 2 || echo 1)
CONF=/tmp/server.properties
cat > "$CONF" <<PROPS
node.id=${NODE_ID}
process.roles=${KAFKA_PROCESS_ROLES:-broker,controller}
listeners=${KAFKA_LISTENERS:-PLAINTEXT://0.0.0.0:9092,CONTROLLER://0.0.0.0:9093}
advertised.listeners=${KAFKA_ADVERTISED_LISTENERS:-PLAINTEXT://$(hostname):9092}
listener.security.protocol.map=${KAFKA_LISTENER_SECURITY_PROTOCOL_MAP:-CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT}
controller.listener.names=${KAFKA_CONTROLLER_LISTENER_NAMES:-CONTROLLER}
inter.broker.listener.name=${KAFKA_INTER_BROKER_LISTENER_NAME:-PLAINTEXT}
controller.quorum.voters=${KAFKA_CONTROLLER_QUORUM_VOTERS:-${NODE_ID}@localhost:9093}
log.dirs=${DATA}
offsets.topic.replication.factor=${RF}
transaction.state.log.replication.factor=${RF}
transaction.state.log.min.isr=${MIN_ISR}
default.replication.factor=${RF}
min.insync.replicas=${MIN_ISR}
group.initial.rebalance.delay.ms=0
PROPS
# KAFKA_CFG_FOO_BAR=x -> foo.bar=x
while IFS='=' read -r name value; do
  key=$(echo "${name#KAFKA_CFG_}" | tr '[:upper:]_' '[:lower:].')
  echo "${key}=${value}" >> "$CONF"
done < <(env | grep '^KAFKA_CFG_' || true)
CP="/opt/im/lib/*"
# shellcheck disable=SC2086
JAVA_OPTS="${KAFKA_HEAP_OPTS:--Xmx512m} -XX:+ExitOnOutOfMemoryError -Dorg.slf4j.simpleLogger.defaultLogLevel=${KAFKA_LOG_LEVEL:-info}"
if [ ! -f "$DATA/meta.properties" ]; then
  # shellcheck disable=SC2086
  java $JAVA_OPTS -cp "$CP" kafka.tools.StorageTool format --ignore-formatted \
    -t "${KAFKA_CLUSTER_ID:-aW1waXBlLWthZmthLTAwMQ}" -c "$CONF"
fi
# shellcheck disable=SC2086
exec java $JAVA_OPTS -cp "$CP" kafka.Kafka "$CONF"
