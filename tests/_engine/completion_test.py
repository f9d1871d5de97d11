"""Completion markers: written atomically, scoped to a run, cleared by a new chief."""

import os

from estimator_lite._engine import completion, model_dir


class FakeClock:
    def __init__(self, now=1000.0):
        self.now = now

    def __call__(self):
        return self.now


def test_marker_round_trip(tmp_path):
    directory = str(tmp_path / "m")
    assert completion.read_training_complete(directory) is None
    completion.write_training_complete(directory, 120, 100, 5.0)
    marker = completion.read_training_complete(directory)
    assert (marker.global_step, marker.max_steps, marker.time_secs) == (120, 100, 5.0)
    assert marker.matches(100) and not marker.matches(None)
    assert not any(name.startswith(model_dir.TRAINING_COMPLETE_FILE + ".tmp")
                   for name in os.listdir(directory))


def test_workers_done_and_clear(tmp_path):
    directory = str(tmp_path)
    completion.write_worker_done(directory, 0, 50)
    completion.write_worker_done(directory, 2, 51)
    (tmp_path / "workers_done" / "notes.txt").write_text("mine")
    assert completion.workers_done(directory) == {0, 2}
    completion.write_training_complete(directory, 51, None, 1.0)
    completion.clear_markers(directory)
    assert completion.workers_done(directory) == set()
    assert completion.read_training_complete(directory) is None
    assert (tmp_path / "workers_done" / "notes.txt").exists()  # not a marker: kept


def test_watcher_ignores_a_marker_from_an_earlier_run(tmp_path):
    directory = str(tmp_path)
    clock = FakeClock(1000.0)
    completion.write_training_complete(directory, 100, None, 500.0)  # old run
    watcher = completion.CompletionWatcher(directory, None, clock)
    assert watcher.poll() is None
    completion.write_training_complete(directory, 200, None, 1001.0)  # this run
    assert watcher.poll().global_step == 200


def test_watcher_believes_a_marker_it_saw_appear(tmp_path):
    directory = str(tmp_path)
    watcher = completion.CompletionWatcher(directory, 10, FakeClock(1000.0))
    assert watcher.poll() is None  # absent: the next marker is this run's
    completion.write_training_complete(directory, 10, 10, 900.0)
    assert watcher.poll().global_step == 10


def test_watcher_ignores_a_marker_for_other_max_steps(tmp_path):
    directory = str(tmp_path)
    watcher = completion.CompletionWatcher(directory, 10, FakeClock(1000.0))
    watcher.poll()
    completion.write_training_complete(directory, 20, 20, 2000.0)
    assert watcher.poll() is None


def test_a_role_started_after_the_end_still_ends(tmp_path):
    """max_steps None: an old marker is believed once it stayed for the grace."""
    directory = str(tmp_path)
    completion.write_training_complete(directory, 300, None, 500.0)
    clock = FakeClock(1000.0)
    watcher = completion.CompletionWatcher(directory, None, clock, grace_secs=60)
    assert watcher.poll() is None
    clock.now += 59
    assert watcher.poll() is None
    clock.now += 1
    assert watcher.poll().global_step == 300


def test_a_new_chief_clearing_the_marker_within_the_grace_wins(tmp_path):
    directory = str(tmp_path)
    completion.write_training_complete(directory, 300, None, 500.0)
    clock = FakeClock(1000.0)
    watcher = completion.CompletionWatcher(directory, None, clock, grace_secs=60)
    clock.now += 30
    completion.clear_markers(directory)  # the new run's chief starts
    assert watcher.poll() is None
    clock.now += 100
    assert watcher.poll() is None  # nothing to believe until this run ends
    completion.write_training_complete(directory, 600, None, clock.now)
    assert watcher.poll().global_step == 600


def test_a_marker_that_reached_max_steps_is_believed_at_once(tmp_path):
    directory = str(tmp_path)
    completion.write_training_complete(directory, 100, 100, 500.0)
    watcher = completion.CompletionWatcher(directory, 100, FakeClock(1000.0))
    assert watcher.poll().global_step == 100
