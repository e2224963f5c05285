"""CDK constructs, one per concern; :mod:`stacks.agent_memory_stack` composes them."""
