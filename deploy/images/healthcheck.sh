#!/bin/bash
# Container health check: GET /health on the pipeline's own port must answer 200 (bash /dev/tcp, no curl needed).
exec 3<>"/dev/tcp/127.0.0.1/${IM_HTTP_PORT:-8080}" || exit 1
printf 'GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n' "${1:-/health}" >&3
read -r -t 3 status <&3 || exit 1
case "$status" in *" 200 "*) exit 0 ;; *) echo "$status"; exit 1 ;; esac
