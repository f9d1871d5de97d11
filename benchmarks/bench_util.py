"""Timing helpers shared by the benchmarks."""

import time

from estimator_lite._tf import tf

__all__ = ["StepTimerHook", "parse_args", "timed_train"]


class StepTimerHook(tf.train.SessionRunHook):
    """Records the wall time when the global step reaches two marks.

    It requests no fetches, so the Estimator keeps its fast path; its own Python
    cost (a counter increment per step) is charged to the loop being measured.
    """

    def __init__(self, start_step, end_step):
        self._marks = (start_step, end_step)
        self._step = None
        self.times = {}

    def after_create_session(self, session, coord):
        self._step = int(session.run(tf.train.get_global_step()))

    def after_run(self, run_context, run_values):
        self._step += 1
        if self._step in self._marks:
            self.times[self._step] = time.perf_counter()


def timed_train(estimator, input_fn, warmup_steps, steps):
    """Trains warmup + steps and returns steps/sec over the last `steps` steps."""
    hook = StepTimerHook(warmup_steps, warmup_steps + steps)
    estimator.train(input_fn, hooks=[hook], max_steps=warmup_steps + steps)
    return steps / (hook.times[warmup_steps + steps] - hook.times[warmup_steps])


def parse_args(parser, argv, quick_sizes):
    """Adds --quick to `parser` and parses `argv`.

    Args:
      parser: the benchmark's argparse parser.
      argv: the arguments (None: sys.argv).
      quick_sizes: {argument name: value} that --quick sets: sizes small enough
        for the test suite, which checks that the benchmark runs and prints its
        JSON line. Such a run measures nothing.

    Returns:
      The parsed arguments.
    """
    parser.add_argument("--quick", action="store_true",
                        help="tiny sizes and one round: a smoke run, not a measurement")
    args = parser.parse_args(argv)
    if args.quick:
        for name, value in quick_sizes.items():
            setattr(args, name, value)
    return args
