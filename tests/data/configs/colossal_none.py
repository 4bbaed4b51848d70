# Colossal-AI configuration: a two-stage pipeline, no tensor parallelism.
BATCH_SIZE = 256
NUM_EPOCHS = 10

parallel = dict(
    pipeline=2,
    tensor=dict(size=1, mode=None),
)
