"""Pre- and post-processors, and the audio feature extractors (mel spectrogram, MFCC, S2S).
Private: the public names are re-exported by `torchtally.bench`."""
