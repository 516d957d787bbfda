# The pipeline from the distribution tarball (bin/im run). Built by deploy/images/build.sh; BASE is any image with a
# Java 17+ runtime on PATH and bash (the health check speaks HTTP over bash's /dev/tcp, so no curl is needed).
ARG BASE=im-base:bookworm-jre17
FROM ${BASE}
ARG DIST=im-pipeline
RUN (getent group im >/dev/null || groupadd --system --gid 10001 im) \
 && (id im >/dev/null 2>&1 || useradd --system --uid 10001 --gid im --home-dir /var/lib/im --shell /usr/sbin/nologin im) \
 && mkdir -p /var/lib/im && chown im:im /var/lib/im
COPY ${DIST}/lib /opt/im/lib
COPY ${DIST}/bin /opt/im/bin
COPY healthcheck.sh /opt/im/bin/healthcheck
ENV IM_HTTP_HOST=0.0.0.0 \
    IM_HTTP_PORT=8080 \
    IM_STATE_DIR=/var/lib/im/streams \
    IM_JAVA_OPTS="-XX:MaxRAMPercentage=75 -XX:+ExitOnOutOfMemoryError"
USER im
WORKDIR /var/lib/im
VOLUME ["/var/lib/im"]
EXPOSE 8080
HEALTHCHECK --interval=5s --timeout=3s --start-period=180s --retries=3 CMD ["/opt/im/bin/healthcheck"]
ENTRYPOINT ["/opt/im/bin/im"]
CMD ["run"]
