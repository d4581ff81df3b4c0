#pragma once
// A run asked to stop by a signal: Ctrl-C (SIGINT), or SIGTERM, which Slurm sends at a job's time
// limit and mpirun relays to every rank when it is interrupted or one rank dies. The first signal
// only sets a flag that the training loop reads at its next step boundary, so that every rank
// stops after the same step and the run keeps what it measured; the same signal again, a second
// or more later, ends the process at once, as it would have without trainio's handler. (Sooner,
// it is a launcher sending it twice, as Slurm and srun do at a time limit; SIGTERM after SIGINT
// is mpirun relaying a Ctrl-C the ranks also got: neither ends them at once.)

namespace trainio::util {

// Installs the handlers (SIGINT, SIGTERM; SA_RESTART, so no storage call sees EINTR).
void install_stop_handlers();
// The signal that asked the run to stop (the first one), 0 when none did.
int stop_signal();
// Asks as that signal would (tests; also a stop the program decides itself).
void request_stop(int signal);
// "SIGINT", "SIGTERM", or "signal N".
const char* signal_name(int signal);
// The exit code of a run stopped by `signal`: 128 + its number, as a shell reports it.
int stop_exit_code(int signal);

}  // namespace trainio::util
