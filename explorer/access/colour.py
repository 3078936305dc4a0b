"""Colours as a reader with red–green colour blindness sees them, and how far apart two colours look.

The simulation is Machado, Oliveira and Fernandes (2009), "A physiologically-based model for simulation of
color vision deficiency", at severity 1 (a full dichromat), applied in linear RGB. Distances are CIE76 ΔE in
CIELAB (D65): about 2.3 is the smallest difference most people notice.
"""
from __future__ import annotations

import numpy as np

MACHADO = {   # linear-RGB matrices, severity 1.0 (the paper's table)
    "protanopia": np.array([[0.152286, 1.052583, -0.204868],
                            [0.114503, 0.786281, 0.099216],
                            [-0.003882, -0.048116, 1.051998]]),
    "deuteranopia": np.array([[0.367322, 0.860646, -0.227968],
                              [0.280085, 0.672501, 0.047413],
                              [-0.011820, 0.042940, 0.968881]]),
}
JND = 2.3   # CIE76 ΔE of a just-noticeable difference


def to_linear(rgb: np.ndarray) -> np.ndarray:
    """sRGB in [0, 1] → linear light."""
    c = np.asarray(rgb, dtype=np.float64)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def to_srgb(linear: np.ndarray) -> np.ndarray:
    c = np.clip(np.asarray(linear, dtype=np.float64), 0, 1)
    return np.where(c <= 0.0031308, 12.92 * c, 1.055 * c ** (1 / 2.4) - 0.055)


def simulate(rgb: np.ndarray, kind: str) -> np.ndarray:
    """``rgb[..., 3]`` (sRGB, 0–1) as seen with ``kind`` ("protanopia", "deuteranopia" or "normal")."""
    if kind == "normal":
        return np.asarray(rgb, dtype=np.float64)
    return to_srgb(to_linear(rgb) @ MACHADO[kind].T)


def lab(rgb: np.ndarray) -> np.ndarray:
    """sRGB (0–1) ``[..., 3]`` → CIELAB ``[..., 3]`` (L* in 0–100), D65 white."""
    xyz = to_linear(rgb) @ np.array([[0.4124564, 0.3575761, 0.1804375],
                                      [0.2126729, 0.7151522, 0.0721750],
                                      [0.0193339, 0.1191920, 0.9503041]]).T
    t = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(t > (6 / 29) ** 3, np.cbrt(t), t / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack([116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])], axis=-1)


def delta_e(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """CIE76 ΔE between sRGB colours ``a`` and ``b`` (``[..., 3]``, 0–1)."""
    return np.linalg.norm(lab(a) - lab(b), axis=-1)
