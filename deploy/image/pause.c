// The node's pause image: the process that holds a Pod's namespaces. It
// reaps the children it inherits and exits on SIGTERM or SIGINT. Built
// static by scripts/build-images.sh (no library in its image).
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void Exit(int signal_number) { _exit(signal_number == SIGTERM ? 0 : 1); }

static void Reap(int signal_number) {
  (void)signal_number;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(void) {
  signal(SIGTERM, Exit);
  signal(SIGINT, Exit);
  signal(SIGCHLD, Reap);
  for (;;) pause();
}
