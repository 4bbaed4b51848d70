# A Colossal-AI configuration with pgroups' own keys: nodes of 2 GPUs, so that the
# 1D tensor groups of 4 ranks cross nodes (the locality report warns).
# pgroups reads this file as literals and never executes it.
BATCH_SIZE = 64

parallel = dict(
    world_size=8,
    pipeline=2,
    tensor=dict(size=4, mode='1d'),
    gpus_per_node=2,
)
