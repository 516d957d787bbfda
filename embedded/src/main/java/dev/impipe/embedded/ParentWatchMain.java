package dev.impipe.embedded;

import java.lang.reflect.InvocationTargetException;
import java.util.Arrays;

/**
 * Runs another program's {@code main} in this JVM and exits when the launching process is gone, even when that one
 * was killed with SIGKILL and had no chance to stop its children: {@code ParentWatchMain <parent pid> <main class>
 * <args...>}. The embedded schema registry (a third-party server) is started through it, so a killed
 * {@code bin/im local} or test JVM does not leave an orphaned registry holding its port and memory. Depends on the JDK
 * only: it shares the child's class path with the program it runs.
 */
public final class ParentWatchMain {

  private ParentWatchMain() {}

  public static void main(String[] args) throws Throwable {
    if (args.length < 2) {
      throw new IllegalArgumentException("usage: ParentWatchMain <parent pid> <main class> [args...]");
    }
    ProcessHandle.of(Long.parseLong(args[0])).ifPresentOrElse(
        parent -> parent.onExit().thenRun(() -> Runtime.getRuntime().halt(0)), () -> Runtime.getRuntime().halt(0));
    try {
      Class.forName(args[1]).getMethod("main", String[].class)
          .invoke(null, (Object) Arrays.copyOfRange(args, 2, args.length));
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
