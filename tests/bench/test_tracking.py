from rankuq.bench.tracking import Tracker, default_tracking_uri


def test_a_run_left_open_is_found_to_complete_but_not_as_logged(tmp_path):
    tracker = Tracker(default_tracking_uri(tmp_path), tmp_path / "mlartifacts")
    opened = tracker.open("k1", "seed run")  # a driver interrupted before finish()
    assert tracker.find("k1") == opened and tracker.find("k1", finished=True) is None
    assert tracker.open("k1", "seed run") == opened  # the rerun completes it: no second run
    tracker.finish(opened)
    assert tracker.find("k1", finished=True) == opened
    assert tracker.run_keys() == ["k1"]
