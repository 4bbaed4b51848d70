"""Colossal-AI configuration: 3D tensor parallelism on a 2 x 2 x 2 cube."""

parallel = dict(
    pipeline=dict(size=1),
    tensor=dict(size=8, mode='3d'),
)
