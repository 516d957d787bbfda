package dev.impipe.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TestTmpDirTest {

  @TempDir
  Path temp;

  @Test
  void aTestsTempDirIsMadeByTheFactoryUnderThisJvmsOwnParent() throws Exception {
    // junit-platform.properties names the factory: where /dev/shm has room, this JVM's directory there
    assertThat(temp).startsWith(TestTmpDir.parent());
    if (TestTmpDir.root(null, Path.of("/dev/shm")) != null && System.getenv("IM_TEST_TMPDIR") == null
        && System.getProperty("im.test.tmpdir") == null) {
      assertThat(TestTmpDir.parent()).isEqualTo(Path.of("/dev/shm", TestTmpDir.PREFIX + ProcessHandle.current().pid()));
    }
  }

  @Test
  void aConfiguredRootWinsAndDefaultKeepsTheJvmsOwn(@TempDir Path shm) {
    assertThat(TestTmpDir.root("/var/tmp/x", shm)).isEqualTo(Path.of("/var/tmp/x"));
    assertThat(TestTmpDir.root("default", shm)).isNull();
  }

  @Test
  void aMissingSharedMemoryDirectoryKeepsTheJvmsOwn(@TempDir Path dir) {
    assertThat(TestTmpDir.root(null, dir.resolve("absent"))).isNull();
    assertThat(TestTmpDir.root("", dir.resolve("absent"))).isNull();
  }

  @Test
  void onlyTheDirectoriesOfProcessesThatAreGoneAreRemoved(@TempDir Path root) throws Exception {
    // Given the directory of this (live) JVM, one of a pid that cannot exist and an unrelated one
    Path live = Files.createDirectories(root.resolve(TestTmpDir.PREFIX + ProcessHandle.current().pid()));
    Path gone = Files.createDirectories(root.resolve(TestTmpDir.PREFIX + Long.MAX_VALUE).resolve("rocksdb"));
    Path other = Files.createDirectories(root.resolve(TestTmpDir.PREFIX + "x"));

    TestTmpDir.removeOrphans(root);

    assertThat(live).exists();
    assertThat(gone.getParent()).doesNotExist();
    assertThat(other).exists();
  }
}
