"""Seeds derived from a root seed and string/int keys (shared by the runner and tuning)."""

import hashlib
import numbers

import numpy as np

__all__ = ["derive_seed"]

_MAX_SEED = 2**31 - 1


def _key_words(key):
    digest = hashlib.sha256(repr(key).encode("utf-8")).digest()
    return [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]


def derive_seed(random_state, *keys):
    """A seed in ``[0, 2**31 - 1)`` determined by ``random_state`` and the ``keys``.

    ``SeedSequence(entropy=[random_state, *sha256_words(keys)])``: stable across
    processes, machines and Python versions (unlike ``hash()``), and different keys give
    independent streams.

    Parameters
    ----------
    random_state : int
        Root seed (non-negative) of the whole experiment; changing it changes every
        derived seed.
    *keys : str or int
        E.g. ``("cell", method, dataset, repeat, fold)``.

    Returns
    -------
    seed : int
        The derived seed, usable as any estimator's ``random_state``.

    Examples
    --------
    >>> derive_seed(0, "cell", "ReliefF", "sonar", 0, 3) == derive_seed(0, "cell", "ReliefF", "sonar", 0, 3)
    True
    """
    if not isinstance(random_state, numbers.Integral) or random_state < 0:
        raise ValueError(f"random_state must be a non-negative int here; got {random_state!r}.")
    words = [] if not keys else _key_words(tuple(int(k) if isinstance(k, numbers.Integral) else str(k) for k in keys))
    ss = np.random.SeedSequence(entropy=[int(random_state), *words])
    return int(ss.generate_state(1, dtype=np.uint32)[0] % _MAX_SEED)
