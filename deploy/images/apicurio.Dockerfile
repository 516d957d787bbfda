# Apicurio Registry (Confluent-compatible API under /apis/ccompat/v7) from the bundle the build fetches
# (io.apicurio:apicurio-registry-app:tar.gz:all). In-memory storage unless APICURIO_STORAGE_KIND=kafkasql.
ARG BASE=im-base:bookworm-jre17
FROM ${BASE}
ARG DIST=im-pipeline
RUN (getent group apicurio >/dev/null || groupadd --system --gid 10003 apicurio) \
 && (id apicurio >/dev/null 2>&1 || useradd --system --uid 10003 --gid apicurio --home-dir /opt/apicurio --shell /usr/sbin/nologin apicurio)
COPY ${DIST}/apicurio /opt/apicurio
ENV QUARKUS_HTTP_HOST=0.0.0.0 \
    QUARKUS_HTTP_PORT=8080 \
    QUARKUS_MANAGEMENT_HOST=0.0.0.0 \
    JAVA_OPTS="-Xmx384m -XX:TieredStopAtLevel=1"
USER apicurio
WORKDIR /opt/apicurio
EXPOSE 8080
HEALTHCHECK --interval=5s --timeout=3s --start-period=120s --retries=5 CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/8080 && printf 'GET /health/ready HTTP/1.0\\r\\n\\r\\n' >&3 && read -r s <&3 && [[ $s == *' 200 '* ]]"]
ENTRYPOINT ["bash", "-c", "exec java $JAVA_OPTS -jar /opt/apicurio/apicurio-registry-app-*-runner.jar"]
