package dev.impipe.bench.scenario;

import java.io.BufferedWriter;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The sync benchmark's load generator, run in its own small JVM so that it does not share a heap, a garbage
 * collector or a JIT with the store it measures (in the store's JVM, {@code java.net.http} cost more CPU than the
 * requests it timed: 1,200 requests/s where wrk got 3,466 from the same server).
 *
 * <p>Plain HTTP/1.1 over keep-alive sockets, one thread per connection, requests built once up front, one reused
 * buffer per connection: it allocates almost nothing per request, so its own pauses stay out of the figures.
 *
 * <ul>
 *   <li>{@code closed}: each connection sends its next request when the previous answer is read; latency from send.
 *   <li>{@code open}: a fixed rate split evenly over the connections (as wrk2 does); each request is timed from
 *       when it was due, not from when it went out, so a stall is charged for every request it delays.
 * </ul>
 *
 * <p>Arguments: {@code HOST PORT TOKENS_FILE LIMIT OUT_DIR WARMUP_SECONDS SECONDS CONNECTIONS OPEN_CONNECTIONS
 * [FIXED_RATE [PATH]]}; with a {@code FIXED_RATE} above 0 (requests/s) only the warm-up and an open loop at that rate
 * run; {@code PATH} replaces the sync request's path ({@code {user}} and {@code {device}} are filled in).
 * The tokens file has one {@code Bearer ...} value per line, line {@code n} for user {@code u<n>}. Three phases run
 * back to back: a closed-loop warm-up (not recorded), a closed loop of {@code SECONDS} on {@code CONNECTIONS}
 * connections (the saturated rate), then an open loop at half that rate on {@code OPEN_CONNECTIONS} connections.
 * {@code OUT_DIR/closed.txt} and {@code OUT_DIR/open.txt} each get one line {@code ok failed entries elapsedNanos
 * offeredPerSecond}, then one latency in microseconds per successful request.
 */
public final class SyncLoad {

  private static final byte[] HEADER_END = "\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

  private SyncLoad() {
  }

  public static void main(String[] args) throws Exception {
    String host = args[0];
    int port = Integer.parseInt(args[1]);
    List<String> tokens = Files.readAllLines(Path.of(args[2]), StandardCharsets.UTF_8);
    int limit = Integer.parseInt(args[3]);
    Path dir = Path.of(args[4]);
    long warmup = Long.parseLong(args[5]);
    long seconds = Long.parseLong(args[6]);
    int connections = Integer.parseInt(args[7]);
    int openConnections = Integer.parseInt(args[8]);

    String path = args.length > 10 ? args[10] : "/v1/users/{user}/devices/{device}/sync?limit=" + limit;
    byte[][] requests = new byte[tokens.size() * 3][];
    for (int u = 0; u < tokens.size(); u++) {
      for (int d = 0; d < 3; d++) {
        requests[u * 3 + d] = ("GET " + path.replace("{user}", Workload.user(u)).replace("{device}", "d" + d)
            + " HTTP/1.1\r\nHost: " + host + ":" + port + "\r\nAuthorization: " + tokens.get(u)
            + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
      }
    }
    double fixedRate = args.length > 9 ? Double.parseDouble(args[9]) : 0;
    phase(host, port, requests, connections, warmup, 0, null);
    if (fixedRate > 0) {
      // Only the open loop, at a rate measured before (the abuse benchmark's second pass runs at the first's).
      phase(host, port, requests, openConnections, seconds, fixedRate, dir.resolve("open.txt"));
      return;
    }
    long[] closed = phase(host, port, requests, connections, seconds, 0, dir.resolve("closed.txt"));
    double saturated = closed[0] / (closed[3] / 1e9);
    phase(host, port, requests, openConnections, seconds, saturated / 2, dir.resolve("open.txt"));
  }

  /** Runs one phase; {@code rate} 0 = closed loop. Returns ok, failed, entries, elapsed nanoseconds. */
  private static long[] phase(String host, int port, byte[][] requests, int connections, long seconds, double rate,
      Path out) throws IOException, InterruptedException {
    boolean open = rate > 0;
    long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50);
    long end = start + TimeUnit.SECONDS.toNanos(seconds);
    long interval = open ? (long) (1e9 * connections / rate) : 0;
    List<Throwable> problems = new CopyOnWriteArrayList<>();
    List<Conn> conns = new ArrayList<>();
    for (int c = 0; c < connections; c++) {
      long first = start + (open ? interval * c / connections : 0);
      conns.add(new Conn(host, port, requests, new SplittableRandom(1000 + c + (out == null ? 0 : 100)), first,
          end, interval, problems));
    }
    conns.forEach(Thread::start);
    for (Conn conn : conns) {
      conn.join();
    }
    long elapsed = System.nanoTime() - start;
    long ok = 0;
    long failed = 0;
    long entries = 0;
    for (Conn conn : conns) {
      ok += conn.count;
      failed += conn.failed;
      entries += conn.entries;
      conn.close();
    }
    if (out != null) {
      double offered = open ? rate : ok / (elapsed / 1e9);
      try (BufferedWriter w = Files.newBufferedWriter(out, StandardCharsets.US_ASCII)) {
        w.write(ok + " " + failed + " " + entries + " " + elapsed + " " + offered + "\n");
        for (Conn conn : conns) {
          for (int i = 0; i < conn.count; i++) {
            w.write(Long.toString(conn.latencies[i]));
            w.write('\n');
          }
        }
      }
      for (Throwable t : problems) {
        System.err.println("sync load problem (" + out.getFileName() + "): " + t);
      }
    }
    return new long[] {ok, failed, entries, elapsed};
  }

  /** One keep-alive connection and the thread that drives it. */
  private static final class Conn extends Thread {
    private static final byte[] SEQ = "\"seq\"".getBytes(StandardCharsets.US_ASCII);

    private final String host;
    private final int port;
    private final byte[][] requests;
    private final SplittableRandom random;
    private final long first;
    private final long end;
    private final long interval;
    private final List<Throwable> problems;
    private long[] latencies = new long[1 << 14];
    private int count;
    private long failed;
    private long entries;
    private Socket socket;
    private InputStream in;
    private OutputStream out;
    private byte[] buf = new byte[64 * 1024];
    private int pos;
    private int lim;

    Conn(String host, int port, byte[][] requests, SplittableRandom random, long first, long end, long interval,
        List<Throwable> problems) {
      super("sync-load");
      setDaemon(true);
      this.host = host;
      this.port = port;
      this.requests = requests;
      this.random = random;
      this.first = first;
      this.end = end;
      this.interval = interval;
      this.problems = problems;
    }

    @Override
    public void run() {
      long due = first;
      while (true) {
        long now = System.nanoTime();
        if (interval > 0) {
          if (due >= end) {
            return;
          }
          if (due > now) {
            LockSupport.parkNanos(due - now);
            continue;
          }
        } else {
          if (now >= end) {
            return;
          }
          due = Math.max(now, first);
          if (due > now) {
            LockSupport.parkNanos(due - now);
            continue;
          }
        }
        byte[] request = requests[random.nextInt(requests.length)];
        try {
          if (socket == null) {
            connect();
          }
          out.write(request);
          out.flush();
          int status = readResponse();
          long done = System.nanoTime();
          if (status == 200) {
            record((done - due) / 1000);
          } else {
            failed++;
            problem(new IllegalStateException("HTTP " + status + ": "
                + new String(buf, 0, Math.min(lim, 300), StandardCharsets.UTF_8)));
          }
        } catch (IOException e) {
          failed++;
          problem(e);
          close();
        }
        due += interval;
      }
    }

    private void record(long micros) {
      if (count == latencies.length) {
        latencies = java.util.Arrays.copyOf(latencies, count * 2);
      }
      latencies[count++] = micros;
    }

    private void problem(Throwable t) {
      if (problems.size() < 5) {
        problems.add(t);
      }
    }

    private void connect() throws IOException {
      socket = new Socket();
      socket.setTcpNoDelay(true);
      socket.connect(new InetSocketAddress(host, port), 5_000);
      socket.setSoTimeout(10_000);
      in = socket.getInputStream();
      out = socket.getOutputStream();
      pos = 0;
      lim = 0;
    }

    void close() {
      try {
        if (socket != null) {
          socket.close();
        }
      } catch (IOException ignored) {
        // closing after a failure
      }
      socket = null;
    }

    /** Reads one response into {@link #buf}; returns its status and counts its {@code "seq"} fields. */
    private int readResponse() throws IOException {
      // Keep-alive: anything after the previous response is the start of this one.
      if (pos < lim) {
        System.arraycopy(buf, pos, buf, 0, lim - pos);
      }
      lim -= Math.min(pos, lim);
      pos = 0;
      int headerEnd;
      while ((headerEnd = indexOf(buf, 0, lim, HEADER_END)) < 0) {
        fill();
      }
      String head = new String(buf, 0, headerEnd, StandardCharsets.US_ASCII);
      int status = Integer.parseInt(head.substring(9, 12));
      String lower = head.toLowerCase(java.util.Locale.ROOT);
      boolean closeAfter = lower.contains("\r\nconnection: close");
      int bodyStart = headerEnd + 4;
      int length = header(lower, "content-length");
      if (length < 0) {
        throw new IOException("only Content-Length answers are read; got: " + head);
      }
      while (lim < bodyStart + length) {
        fill();
      }
      if (status == 200) {
        int from = bodyStart;
        int stop = bodyStart + length;
        int i;
        while ((i = indexOf(buf, from, stop, SEQ)) >= 0) {
          entries++;
          from = i + SEQ.length;
        }
      }
      pos = bodyStart + length;
      if (closeAfter) {
        close();
      }
      return status;
    }

    private void fill() throws IOException {
      if (lim == buf.length) {
        buf = java.util.Arrays.copyOf(buf, buf.length * 2);
      }
      int n = in.read(buf, lim, buf.length - lim);
      if (n < 0) {
        throw new EOFException("the server closed the connection");
      }
      lim += n;
    }

    private static int header(String lowerHead, String name) {
      int i = lowerHead.indexOf("\r\n" + name + ":");
      if (i < 0) {
        return -1;
      }
      int from = i + name.length() + 3;
      int to = lowerHead.indexOf("\r\n", from);
      return Integer.parseInt(lowerHead.substring(from, to < 0 ? lowerHead.length() : to).trim());
    }

    private static int indexOf(byte[] a, int from, int to, byte[] pattern) {
      outer : for (int i = from; i <= to - pattern.length; i++) {
        for (int j = 0; j < pattern.length; j++) {
          if (a[i + j] != pattern[j]) {
            continue outer;
          }
        }
        return i;
      }
      return -1;
    }
  }
}
