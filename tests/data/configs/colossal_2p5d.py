# Colossal-AI configuration: 2.5D (Tesseract) tensor parallelism, q = 2, depth = 2.
TENSOR_PARALLEL_MODE = '2.5d'

parallel = dict(
    pipeline=2,
    tensor=dict(size=8, mode='2.5d', depth=2),
)
