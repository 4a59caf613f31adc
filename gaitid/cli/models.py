"""``gaitid models``: the models, the markers and the subject parameters each needs."""

from __future__ import annotations

import argparse

from gaitid.cli.options import EXIT_OK


def add_models_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", help="show one model (name or .toml path)")


def cmd_models(args: argparse.Namespace) -> int:
    """List the models, the markers and the subject parameters each needs."""
    from gaitid.model.markerset import (
        list_models,
        load_model,
        model_parameters,
        required_markers,
    )

    for name in [args.name] if args.name else list_models():
        model = load_model(name)
        need = required_markers(model)
        print(f"{model.name}: {getattr(model, 'title', '') or ''}".rstrip())
        print(f"  markers required: {' '.join(need['required'])}")
        if need["one_of"]:
            print(f"  one of:   {' | '.join('+'.join(group) for group in need['one_of'])}")
        if need["optional"]:
            print(f"  optional: {' '.join(need['optional'])}")
        if need["from_static"]:
            print(f"  rebuilt from the static trial (not needed in walking trials): {' '.join(need['from_static'])}")
        print("  subject: mass (--mass KG) always; height only for --normalise bw-height (--height M)")
        params = model_parameters(model)
        for p in params:
            if not p["required"]:
                continue
            sides = [("left", "L"), ("right", "R")] if p["per_side"] else [("left", "")]
            vicon = sorted({x.replace("{S}", model.sides[side.capitalize()]) for x in p["sources"]
                            if x[:1].isupper() or "{S}" in x
                            for side, _ in sides})
            si = sorted({x.replace("{side}", side) for x in p["sources"] if x[:1].islower() for side, _ in sides})
            how = p["option"] or "--subject FILE"
            print(f"  needs {p['name']}{' per side' if p['per_side'] else ''}: {how}, or "
                  f"{'/'.join(vicon)} (C3D PROCESSING, .vsk, .mp; mm)"
                  + (f", or {'/'.join(si)} (a --subject table; m)" if si else ""))
        optional = []
        for p in params:
            if p["required"]:
                continue
            d = p["default"]
            if isinstance(d, str) and d.startswith("markers:"):
                dflt = f"measured {d[8:].replace(',', '-')}"
            elif p["static"]:
                dflt = "from the static trial, else the file's, else 0"
            elif d is None:
                dflt = "the model computes it when not given"
            else:
                dflt = f"default {d:g}"
            optional.append(f"{p['name']} ({dflt})")
        if optional:
            print(f"  optional parameters: {'; '.join(optional)}")
    return EXIT_OK
