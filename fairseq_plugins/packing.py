"""One shared helper of the plugins' models: a (Bi)LSTM over right-padded sequences,
run on packed sequences so that padding never reaches the recurrence."""
import torch
import torch.nn as nn


def packed_lstm(lstm: nn.LSTM, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """``lstm`` (batch_first) over ``x`` [B, T, d] with real lengths ``lengths`` [B];
    padded positions of the output are zeros, its width stays T."""
    packed = nn.utils.rnn.pack_padded_sequence(x, lengths.cpu(), batch_first=True,
                                               enforce_sorted=False)
    out, _ = lstm(packed)
    out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=x.size(1))
    return out
