# Colossal-AI configuration: a two-stage pipeline and 2D (SUMMA) tensor parallelism.
# pgroups reads this file as literals and never executes it.
BATCH_SIZE = 128
NUM_EPOCHS = 60
WARMUP_EPOCHS = 5
LEARNING_RATE = 3e-3
WEIGHT_DECAY = 0.3

parallel = dict(
    pipeline=2,
    tensor=dict(size=4, mode='2d'),  # q = 2
)

gradient_accumulation = 2
clip_grad_norm = 1.0
