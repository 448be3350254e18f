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


def packed_lstm_states(lstm: nn.LSTM, x: torch.Tensor, lengths: torch.Tensor, state=None):
    """As :func:`packed_lstm`, starting from ``state`` (h0, c0) [layers × directions, B,
    hidden] (zeros when None), and also returning the final (h, c) of each sequence:
    the forward direction's after its last real word, the backward one's after its
    first, whatever the padding."""
    packed = nn.utils.rnn.pack_padded_sequence(x, lengths.cpu(), batch_first=True,
                                               enforce_sorted=False)
    out, final = lstm(packed, state)
    out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=x.size(1))
    return out, final
