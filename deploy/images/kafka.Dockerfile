# An Apache Kafka broker (KRaft) from the Kafka jars the project builds with (the tarball's lib/ holds kafka_2.13 and
# its dependencies, the same broker bin/im local embeds). One image for a single combined node or a cluster: see
# kafka-entrypoint.sh for the variables.
ARG BASE=im-base:bookworm-jre17
FROM ${BASE}
ARG DIST=im-pipeline
RUN (getent group kafka >/dev/null || groupadd --system --gid 10002 kafka) \
 && (id kafka >/dev/null 2>&1 || useradd --system --uid 10002 --gid kafka --home-dir /var/lib/kafka --shell /usr/sbin/nologin kafka) \
 && mkdir -p /var/lib/kafka && chown kafka:kafka /var/lib/kafka
COPY ${DIST}/lib /opt/im/lib
COPY kafka-entrypoint.sh /opt/kafka/entrypoint.sh
USER kafka
VOLUME ["/var/lib/kafka"]
EXPOSE 9092 9093
HEALTHCHECK --interval=5s --timeout=3s --start-period=120s --retries=5 CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${KAFKA_HEALTH_PORT:-9092}"]
ENTRYPOINT ["/opt/kafka/entrypoint.sh"]
