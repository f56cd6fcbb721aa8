"""The one evidence engine: failure text of any kind -> ranked root causes.

    signatures.py  the signature database, one format (`envdoctor.signatures/1`), validated on load
    engine.py      the scanner (one pass, a literal prefilter, line shapes) and the specificity ranking
    reader.py      bounded-memory reading (blocks of whole lines; an over-long line is cut and said so)
    needles.py     the literal prefilter; shapes.py: reading each kind of line once
    inputs.py      files, directories, pipes and standard input

`envdoctor nccl diagnose` (`envdoctor.nccl`) is its NCCL view; `envdoctor diagnose`
(`envdoctor.usecases.diagnose_text`) reads every signature.
"""
