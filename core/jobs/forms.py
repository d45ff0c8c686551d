"""The fields every analysis's run form has: how many bootstrap draws, and the seed."""

from django import forms


def bootstrap_field(max_draws: int, initial: int, help_text: str) -> forms.IntegerField:
    return forms.IntegerField(
        label="Bootstrap draws",
        min_value=1,
        max_value=max_draws,
        initial=initial,
        help_text=help_text,
    )


def seed_field(initial: int, help_text: str = "") -> forms.IntegerField:
    return forms.IntegerField(label="Seed", min_value=0, initial=initial, help_text=help_text)
