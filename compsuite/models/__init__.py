"""Models in the loop, whatever serves them: the model protocol (protocol.py: the
command protocol's tasks and declared capabilities), the decoding settings
(decoding.py), what a backend's predict returns (predictions.py), recording and
replaying what a model is asked (recording.py: export and score) and CTranslate2 as a
decoding engine (ctranslate2.py).  Imports nothing of the toolkits: they build on it."""
