"""Words people write for a spec's values and keys, and what they meant.

Spelling distance alone misleads on these: 'training' looks like 'ptuning', 'serving' like
nothing, 'activation' like 'attention', and Hugging Face ``config.json`` names
('intermediate_size', 'num_local_experts') like no spec field at all. ``messages`` looks a
word up here before it falls back to a did-you-mean by spelling.
"""

from __future__ import annotations

# Words people use for a workload kind: by spelling, 'training' was sent to 'ptuning' and
# 'finetune' and 'serving' nowhere
_TRAINING = ("a training run is one of: pretrain (from scratch), sft (full fine-tuning), "
             "lora or ptuning")
KIND_SYNONYMS = {
    **dict.fromkeys(("training", "train", "trainer"), _TRAINING),
    **dict.fromkeys(("finetune", "fine-tune", "fine_tune", "finetuning", "fine-tuning",
                     "fine_tuning", "full-finetune", "full_finetune"),
                    "did you mean 'sft' (full fine-tuning) or 'lora'?"),
    **dict.fromkeys(("pretraining", "pre-training", "pre-train", "pre_train"),
                    "did you mean 'pretrain'?"),
    **dict.fromkeys(("qlora", "peft", "adapter"), "did you mean 'lora'?"),
    **dict.fromkeys(("serving", "serve", "infer", "decode", "chat", "generation"),
                    "did you mean 'inference'?"),
}


# Hugging Face config.json names (and a few other common spellings) of inline-architecture
# fields: spelling distance sent 'activation' to 'attention' and 'intermediate_size' nowhere
KEY_SYNONYMS = {
    "activation": "mlp", "hidden_act": "mlp", "act_fn": "mlp", "mlp_type": "mlp",
    "ffn_type": "mlp", "num_hidden_layers": "layers", "num_layers": "layers",
    "n_layers": "layers", "num_attention_heads": "attention_heads",
    "n_heads": "attention_heads", "num_key_value_heads": "kv_heads",
    "n_kv_heads": "kv_heads", "intermediate_size": "ffn_hidden_size",
    "ffn_dim": "ffn_hidden_size", "d_model": "hidden_size", "n_embd": "hidden_size",
    "num_local_experts": "experts", "n_routed_experts": "experts", "num_experts": "experts",
    "num_experts_per_tok": "top_k", "tie_word_embeddings": "tied_embeddings",
    "moe_intermediate_size": "ffn_hidden_size",
}
