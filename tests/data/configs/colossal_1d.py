# Colossal-AI configuration: 1D tensor parallelism, pipeline given as a dict.
BATCH_SIZE = 128
LEARNING_RATE = 3e-4

parallel = dict(
    pipeline=dict(size=2),
    tensor=dict(size=4, mode='1d'),
)
