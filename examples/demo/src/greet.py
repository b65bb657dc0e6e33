"""Greets people by name."""


def greet(name: str) -> str:
    # TODO: handle an empty name
    return f"Hello, {name}!"


if __name__ == "__main__":
    print(greet("world"))
