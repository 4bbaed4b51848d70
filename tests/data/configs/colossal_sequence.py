# Colossal-AI configuration: sequence parallelism over 4 ranks.
SEQ_LENGTH = 512
parallel = dict(pipeline=2, tensor=dict(size=4, mode="sequence"))
