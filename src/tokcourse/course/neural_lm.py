"""A tiny neural language model in numpy, with tied or untied embeddings (chapters 08-10).

The model of Bengio et al., "A Neural Probabilistic Language Model" (2003), at toy size:
the embeddings of the last ``k`` tokens, concatenated, go through one hidden layer, are
projected back to the embedding's width and scored against every token's output row::

    x = concat(E[t-k], ..., E[t-1])          (k * dim)
    h = tanh(x @ W1 + b1)                    (hidden)
    z = h @ W2 + b2                          (dim)
    logits = z @ head.T + b                  (vocab_size)

With ``tied=True`` the head *is* the embedding matrix ``E`` (one array, as in GPT-2): every
row of ``E`` then gets a gradient at every step through the softmax, whether or not its token
ever appears in the input. With ``tied=False`` the head is a separate matrix ``U``, and a row
of ``E`` moves only when its token is an input, so the row of a token the training text never
contains keeps its initial value exactly (Adam's update of a parameter whose gradient has
always been 0 is 0). That is chapter 10's point about glitch tokens: "never an input", not
"never trained". :attr:`NeuralLM.initial_embedding` keeps the starting values to measure it.

Training is plain backpropagation written out by hand (:meth:`NeuralLM.loss_and_grads`),
with Adam (Kingma and Ba, 2015) on minibatches. ``weight_decay`` (off by default) is AdamW's
decoupled decay on the matrices (not the biases): it pulls *every* row toward 0 at every
step, unused rows too, so it would blur the tied/untied contrast above. Everything random
comes from ``numpy.random.default_rng(seed)``: the same seed gives the same weights.

>>> m = NeuralLM(vocab_size=5, dim=4, context_size=2, hidden=8, seed=0)
>>> _ = m.fit([0, 1, 2, 3, 4] * 40, epochs=30, progress=False)
>>> int(m.next_distribution([0, 1]).argmax())  # 0 1 is always followed by 2
2
"""

from __future__ import annotations

import contextlib
import ctypes
import operator
from collections.abc import Iterator, Sequence

import numpy as np

__all__ = [
    "NeuralLM",
    "as_ids",
    "as_sequences",
    "blas_thread_controls",
    "check_vocab_size",
    "one_blas_thread",
]


def check_vocab_size(vocab_size: object) -> int:
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, (int, np.integer)):
        raise TypeError(f"vocab_size must be an int, got {vocab_size!r}")
    if vocab_size < 1:
        raise ValueError(f"vocab_size must be >= 1, got {vocab_size}")
    return int(vocab_size)


def as_ids(ids: object, vocab_size: int, what: str = "ids") -> np.ndarray:
    """``ids`` as a 1-D int64 array, each in ``0 .. vocab_size - 1`` (else ValueError)."""
    if isinstance(ids, (str, bytes)):
        raise TypeError(f"{what} must be a sequence of int token ids, not {type(ids).__name__}")
    arr = np.asarray(ids)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.ndim != 1 or not (np.issubdtype(arr.dtype, np.integer) or arr.dtype == bool):
        raise ValueError(f"{what} must be a flat sequence of int token ids, got {arr.dtype}")
    if arr.dtype == bool:
        raise ValueError(f"{what} must be int token ids, not bools")
    bad = (arr < 0) | (arr >= vocab_size)
    if bad.any():
        at = int(np.argmax(bad))
        raise ValueError(
            f"{what}[{at}] = {int(arr[at])} is not a token id of a {vocab_size}-token "
            f"vocabulary (0..{vocab_size - 1})"
        )
    return arr.astype(np.int64)


def as_sequences(data: object, vocab_size: int) -> list[np.ndarray]:
    """One sequence of ids (a list of ints, a 1-D array) or several (a list of those), checked.

    Raises ValueError when there is no id at all.
    """
    if isinstance(data, np.ndarray) and data.ndim == 1:
        seqs = [data]
    elif isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        nested = len(data) > 0 and all(isinstance(s, (Sequence, np.ndarray)) for s in data)
        seqs = list(data) if nested else [data]
    else:
        raise TypeError(f"ids must be a sequence of ints or of sequences, not {type(data)}")
    out = [as_ids(s, vocab_size, "training ids") for s in seqs]
    if not sum(len(s) for s in out):
        raise ValueError("no training ids: the data is empty")
    return out


def blas_thread_controls() -> list[tuple]:
    """(get, set) of the thread count of every OpenBLAS loaded in this process (Linux only)."""
    controls = []
    with contextlib.suppress(OSError):
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "openblas" in line.lower()}
        for path in sorted(paths):
            with contextlib.suppress(OSError):
                lib = ctypes.CDLL(path)
                for prefix, suffix in [
                    ("scipy_openblas", "64_"),
                    ("scipy_openblas", ""),
                    ("openblas", ""),
                ]:
                    get, set_ = (
                        f"{prefix}_get_num_threads{suffix}",
                        f"{prefix}_set_num_threads{suffix}",
                    )
                    if hasattr(lib, get) and hasattr(lib, set_):
                        controls.append((getattr(lib, get), getattr(lib, set_)))
                        break
    return controls


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run numpy's matrix products on one thread (OpenBLAS on Linux; elsewhere nothing changes).

    These matrices are small: a second BLAS thread saves little, and on a busy machine its
    busy-waiting costs several times the work. One thread also keeps a run's sums from
    depending on how many cores the machine has.
    """
    controls = blas_thread_controls()
    before = [get() for get, _ in controls]
    for _, set_ in controls:
        set_(1)
    try:
        yield
    finally:
        for (_, set_), n in zip(controls, before, strict=True):
            set_(n)


def _positive_int(value: object, name: str) -> int:
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got {value!r}")
    value = operator.index(value)
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return value


class NeuralLM:
    """A Bengio-style neural LM: ``context_size`` embeddings -> tanh layer -> output head.

    Parameters (in :attr:`params`): ``E`` (vocab_size x dim, the input embedding), ``W1``,
    ``b1``, ``W2``, ``b2``, ``b`` (the output bias) and, untied only, ``U`` (vocab_size x dim,
    the output embedding). :attr:`head` is ``E`` itself when tied. Initial values: normal with
    standard deviation ``1 / sqrt(fan-in)`` for the matrices (``1 / sqrt(dim)`` for ``E`` and
    ``U``), zero for the biases. ``dtype`` float32 is fast; float64 is for gradient checks.
    """

    def __init__(
        self,
        vocab_size: int,
        dim: int = 48,
        context_size: int = 3,
        hidden: int = 128,
        *,
        tied: bool = True,
        seed: int = 0,
        dtype: type = np.float32,
    ) -> None:
        self.vocab_size = check_vocab_size(vocab_size)
        self.dim = _positive_int(dim, "dim")
        self.context_size = _positive_int(context_size, "context_size")
        self.hidden = _positive_int(hidden, "hidden")
        self.tied = bool(tied)
        self.dtype = np.dtype(dtype)
        self.rng = np.random.default_rng(seed)
        V, d, k, H = self.vocab_size, self.dim, self.context_size, self.hidden

        def normal(rows: int, cols: int, fan_in: int) -> np.ndarray:
            return (self.rng.standard_normal((rows, cols)) / np.sqrt(fan_in)).astype(self.dtype)

        self.params: dict[str, np.ndarray] = {"E": normal(V, d, d)}
        if not self.tied:
            self.params["U"] = normal(V, d, d)
        self.params |= {
            "W1": normal(k * d, H, k * d),
            "b1": np.zeros(H, self.dtype),
            "W2": normal(H, d, H),
            "b2": np.zeros(d, self.dtype),
            "b": np.zeros(V, self.dtype),
        }
        #: the input embedding and the head as they were before any training (copies)
        self.initial_embedding = self.params["E"].copy()
        self.initial_head = self.head.copy()
        self._m = {n: np.zeros_like(p) for n, p in self.params.items()}
        self._v = {n: np.zeros_like(p) for n, p in self.params.items()}
        self.steps = 0
        #: mean training loss of each step, in bits per token
        self.history: list[float] = []

    @property
    def embedding(self) -> np.ndarray:
        """The input embedding ``E`` (vocab_size x dim): row i is token i as an input."""
        return self.params["E"]

    @property
    def head(self) -> np.ndarray:
        """The output embedding (vocab_size x dim): ``E`` itself when tied, else ``U``."""
        return self.params["E"] if self.tied else self.params["U"]

    # ---- the model -----------------------------------------------------------------------

    def _forward(self, X: np.ndarray) -> tuple[np.ndarray, ...]:
        p = self.params
        x = p["E"][X].reshape(len(X), -1)
        h = np.tanh(x @ p["W1"] + p["b1"])
        z = h @ p["W2"] + p["b2"]
        logits = z @ self.head.T + p["b"]
        return x, h, z, logits

    @staticmethod
    def _log_softmax(logits: np.ndarray) -> np.ndarray:
        shifted = logits - logits.max(axis=1, keepdims=True)
        return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))

    def loss_and_grads(self, X: np.ndarray, Y: np.ndarray) -> tuple[float, dict[str, np.ndarray]]:
        """Mean cross-entropy (nats) of targets ``Y`` after contexts ``X``, and its gradients.

        ``X`` is (batch, context_size) ids, ``Y`` (batch,) ids. Backpropagation by hand, one
        line per line of the forward pass, read bottom to top.
        """
        p, B = self.params, len(X)
        x, h, z, logits = self._forward(X)
        logp = self._log_softmax(logits)
        loss = float(-logp[np.arange(B), Y].mean())
        dlogits = np.exp(logp)  # softmax - one_hot(Y), over the batch size
        dlogits[np.arange(B), Y] -= 1
        dlogits /= B
        g = {"b": dlogits.sum(axis=0)}
        dhead = dlogits.T @ z  # logits = z @ head.T + b
        dz = dlogits @ self.head
        g["W2"], g["b2"] = h.T @ dz, dz.sum(axis=0)  # z = h @ W2 + b2
        da = (dz @ p["W2"].T) * (1 - h * h)  # h = tanh(a)
        g["W1"], g["b1"] = x.T @ da, da.sum(axis=0)  # a = x @ W1 + b1
        dx = (da @ p["W1"].T).reshape(B * self.context_size, self.dim)
        dE = np.zeros_like(p["E"])
        np.add.at(dE, X.reshape(-1), dx)  # x = E[X]: each input row gets its slices back
        if self.tied:
            dE += dhead  # the same matrix, used a second time as the head
        else:
            g["U"] = dhead
        g["E"] = dE
        return loss, g

    def _adam_step(self, grads: dict[str, np.ndarray], lr: float, weight_decay: float) -> None:
        b1, b2, eps = 0.9, 0.999, 1e-8
        self.steps += 1
        c1, c2 = 1 - b1**self.steps, 1 - b2**self.steps
        for name, param in self.params.items():
            m, v, g = self._m[name], self._v[name], grads[name]
            m *= b1
            m += (1 - b1) * g
            v *= b2
            v += (1 - b2) * g * g
            if weight_decay and param.ndim == 2:
                param -= lr * weight_decay * param
            param -= lr * (m / c1) / (np.sqrt(v / c2) + eps)

    # ---- training and scoring ------------------------------------------------------------

    def examples(self, data: object) -> tuple[np.ndarray, np.ndarray]:
        """Every (context, next id) pair of ``data`` (one sequence or several): ``X``, ``Y``."""
        k = self.context_size
        Xs, Ys = [], []
        for s in as_sequences(data, self.vocab_size):
            if len(s) > k:
                windows = np.lib.stride_tricks.sliding_window_view(s, k + 1)
                Xs.append(windows[:, :k])
                Ys.append(windows[:, k])
        if not Xs:
            raise ValueError(
                f"no training examples: every sequence needs more than context_size={k} ids"
            )
        return np.concatenate(Xs), np.concatenate(Ys)

    def fit(
        self,
        data: Sequence[int] | Sequence[Sequence[int]] | np.ndarray,
        *,
        epochs: int = 1,
        batch_size: int = 128,
        lr: float = 3e-3,
        weight_decay: float = 0.0,
        progress: bool | None = None,
    ) -> NeuralLM:
        """Train on every (last ``context_size`` ids, next id) pair of ``data``; returns self.

        Each epoch visits the pairs once, in an order drawn from the model's generator, in
        minibatches of ``batch_size``. ``progress``: a tqdm bar (None: only for 100,000 pairs
        or more). Calling ``fit`` again continues training.
        """
        X, Y = self.examples(data)
        epochs = _positive_int(epochs, "epochs")
        batch_size = _positive_int(batch_size, "batch_size")
        if not lr > 0 or not weight_decay >= 0:
            raise ValueError(f"need lr > 0 and weight_decay >= 0, got {lr!r}, {weight_decay!r}")
        n_batches = -(-len(X) // batch_size)
        show = len(X) * epochs >= 100_000 if progress is None else progress
        with contextlib.ExitStack() as stack:
            bar = None
            if show:
                from tqdm.auto import tqdm

                bar = stack.enter_context(tqdm(total=epochs * n_batches, desc="training"))
            stack.enter_context(one_blas_thread())
            for _ in range(epochs):
                order = self.rng.permutation(len(X))
                for start in range(0, len(X), batch_size):
                    batch = order[start : start + batch_size]
                    loss, grads = self.loss_and_grads(X[batch], Y[batch])
                    self._adam_step(grads, lr, weight_decay)
                    self.history.append(loss / np.log(2))
                    if bar is not None:
                        bar.update(1)
                        if self.steps % 50 == 0:
                            bar.set_postfix(bits=f"{self.history[-1]:.2f}")
        return self

    def _check_context(self, context: object, what: str) -> np.ndarray:
        ctx = as_ids(context, self.vocab_size, what)
        if len(ctx) < self.context_size:
            raise ValueError(
                f"{what} is too short: the model reads the last {self.context_size} ids, "
                f"got {len(ctx)}"
            )
        return ctx

    def next_distribution(self, context: Sequence[int] | np.ndarray) -> np.ndarray:
        """Probabilities of every id after ``context`` (its last ``context_size`` ids), float64."""
        ctx = self._check_context(context, "context")[-self.context_size :]
        logits = self._forward(ctx[None, :])[3].astype(np.float64)
        return np.exp(self._log_softmax(logits)[0])

    def log2_probs(
        self, ids: Sequence[int] | np.ndarray, context: Sequence[int] | np.ndarray = ()
    ) -> np.ndarray:
        """log2 P(id | the ``context_size`` ids before it) for each of ``ids``, after ``context``.

        ``context`` must hold at least ``context_size`` ids: the model cannot score a token
        with fewer before it.
        """
        ids = as_ids(ids, self.vocab_size, "ids")
        k = self.context_size
        full = np.concatenate([self._check_context(context, "context")[-k:], ids])
        windows = np.lib.stride_tricks.sliding_window_view(full, k + 1)
        out = np.empty(len(ids))
        with one_blas_thread():
            for start in range(0, len(ids), 4096):
                w = windows[start : start + 4096]
                logp = self._log_softmax(self._forward(w[:, :k])[3].astype(np.float64))
                out[start : start + len(w)] = logp[np.arange(len(w)), w[:, k]] / np.log(2)
        return out
