"""Unique MindSpore names for the parameters one gradient or one graph uses.

A MindTorch parameter's MindSpore name is its attribute path in its model (``main.0.weight``, ``fc.weight``,
``weight``), so two models of one script often share names: dcgan's Generator and Discriminator both own
``main.0.weight``, any two bare ``nn.Linear`` own ``weight``, an EMA copy owns all of its model's names. PyTorch
never looks at them. MindSpore does: ``ParameterTuple`` refuses a name twice ("its name 'main.0.weight' already
exists. Please set a unique name for the parameter", with both tensors printed), and a graph identifies its
parameters by name. dcgan's ``errD_fake.backward()`` (netG and netD in one forward) failed that way.

:func:`unique` is called on every list of parameters that becomes a ``ParameterTuple`` (``adapter/tape.py``,
``adapter/compiled_step.py``). The first parameter to use a name keeps it; a later, different parameter with the same
name is renamed ``<name>#<k>`` (the smallest k >= 1 free) before any graph sees it. Names are claimed in the order
parameters are first differentiated, so a parameter already inside a compiled graph is never renamed. State dict keys,
``torch.save`` files and ``named_parameters()`` come from module attributes, not from these names, and do not change.
"""
from __future__ import annotations

import weakref
from typing import List

_claimed: "weakref.WeakValueDictionary" = weakref.WeakValueDictionary()  # name -> the Parameter holding it


def unique(params: List) -> List:
    """Give every parameter of ``params`` a name no other live, already-claimed parameter has (module docstring);
    return ``params``. Renames in place (``Parameter.name``); a no-op for names already unique."""
    for p in params:
        name = p.name
        holder = _claimed.get(name)
        if holder is p:
            continue
        if holder is not None and holder.name == name:
            k = 1
            while True:
                candidate = f"{name}#{k}"
                other = _claimed.get(candidate)
                if other is None or other.name != candidate:
                    break
                k += 1
            p.name = name = candidate
        _claimed[name] = p
    return params
