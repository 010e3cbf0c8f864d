"""The Keras layer table of make_keras_layers.py covers keras.layers: every layer class that
Keras 3 exports is either covered by a case or listed in NOT_COVERED with a reason, so a new
class in a Keras upgrade cannot slip through. Runs always (it needs Keras, not our runtime)."""
import make_keras_layers as g


def _covered():
    return {n for c in g.CASES.values() for n in c.covers}


def test_every_keras_layer_class_is_covered_or_listed():
    listed = _covered() | set(g.NOT_COVERED)
    unlisted = sorted("/".join(sorted(names)) for names in g.public_layer_names().values()
                      if not names & listed)
    assert not unlisted, (f"keras.layers classes in neither make_keras_layers.CASES nor "
                          f"NOT_COVERED: {unlisted}")


def test_table_names_real_layer_classes():
    public = set().union(*g.public_layer_names().values())
    unknown = sorted((_covered() | set(g.NOT_COVERED)) - public)
    assert not unknown, f"not layer classes of keras.layers: {unknown}"


def test_no_class_is_both_covered_and_not_covered():
    both = sorted(_covered() & set(g.NOT_COVERED))
    assert not both, f"covered by a case and listed in NOT_COVERED: {both}"
    assert all(reason.strip() for reason in g.NOT_COVERED.values())
