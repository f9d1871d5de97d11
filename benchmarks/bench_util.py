"""Timing helpers shared by the benchmarks."""

import time

from estimator_lite._tf import tf

__all__ = ["BareLoopHook", "StepTimerHook", "parse_args", "timed_train",
           "timed_train_with_cpu"]


class StepTimerHook(tf.train.SessionRunHook):
    """Records the wall time when the global step reaches two marks.

    It requests no fetches, so the Estimator keeps its fast path; its own Python
    cost (a counter increment per step) is charged to the loop being measured.
    With multi-step loops (`steps_per_run` K) its after_run comes once per loop:
    the marks must then be multiples of K.
    """

    def __init__(self, start_step, end_step, steps_per_run=1):
        self._marks = (start_step, end_step)
        self._steps_per_run = steps_per_run
        self._step = None
        self.times = {}
        self.cpu_times = {}  # process CPU seconds (all threads) at the marks

    def begin(self):
        # A loop that fell back to one step per call (its warning says why) has
        # no loop-length placeholder: each after_run is then one step.
        try:
            tf.get_default_graph().get_operation_by_name("steps_in_loop")
        except KeyError:
            self._steps_per_run = 1

    def after_create_session(self, session, coord):
        self._step = int(session.run(tf.train.get_global_step()))

    def after_run(self, run_context, run_values):
        self._step += self._steps_per_run
        if self._step in self._marks:
            self.times[self._step] = time.perf_counter()
            self.cpu_times[self._step] = time.process_time()


def timed_train(estimator, input_fn, warmup_steps, steps):
    """Trains warmup + steps and returns steps/sec over the last `steps` steps.

    With RunConfig(experimental_steps_per_loop=K), both counts are rounded up to
    multiples of K (the hook sees loop boundaries only).
    """
    return timed_train_with_cpu(estimator, input_fn, warmup_steps, steps)[0]


def timed_train_with_cpu(estimator, input_fn, warmup_steps, steps):
    """As `timed_train`; returns (steps/sec, process CPU milliseconds per 1000 steps).

    The CPU time (every thread of the process) hardly depends on what else runs
    on the machine, where steps/sec does: it compares loops on a loaded machine.
    """
    per_run = getattr(estimator.config, "experimental_steps_per_loop", 1)
    warmup_steps = -(-warmup_steps // per_run) * per_run
    steps = -(-steps // per_run) * per_run
    hook = StepTimerHook(warmup_steps, warmup_steps + steps, per_run)
    estimator.train(input_fn, hooks=[hook], max_steps=warmup_steps + steps)
    end, start = warmup_steps + steps, warmup_steps
    cpu_ms = 1e6 * (hook.cpu_times[end] - hook.cpu_times[start]) / steps
    return steps / (hook.times[end] - hook.times[start]), cpu_ms


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


class BareLoopHook(tf.train.SessionRunHook):
    """Times a bare ``session.run(train_op)`` loop on the Estimator's own graph.

    In `after_create_session` it runs `warmup_steps` then `steps` steps of the
    train op alone through a precompiled callable (no step guard, hooks,
    summaries or logging): the physical limit of any loop on that graph. The
    train op is found as the control input of estimator_lite's step guard.
    Use it on a throw-away model_dir: those steps train the model.
    """

    def __init__(self, warmup_steps, steps):
        self._warmup_steps = warmup_steps
        self._steps = steps
        self.steps_per_sec = None

    def after_create_session(self, session, coord):
        del coord
        guard = session.graph.get_operation_by_name("step_guard")
        step_after = next(op for op in _ancestors(guard) if op.control_inputs)
        run = session.make_callable(step_after.control_inputs[0])
        for _ in range(self._warmup_steps):
            run()
        start = time.perf_counter()
        for _ in range(self._steps):
            run()
        self.steps_per_sec = self._steps / (time.perf_counter() - start)


def _ancestors(op):
    """`op` and the ops it reads from, breadth first."""
    seen, queue = set(), [op]
    while queue:
        current = queue.pop(0)
        if current in seen:
            continue
        seen.add(current)
        yield current
        queue.extend(t.op for t in current.inputs)
