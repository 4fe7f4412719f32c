"""Build step for the optional C accelerator (mcptrace/_scan.c); all metadata is in pyproject.toml.

The extension is optional: where no C compiler is available the build goes on
without it and the loaders use their pure-Python path (same results, slower).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "mcptrace._scan",
            sources=["mcptrace/_scan.c"],
            extra_compile_args=[
                "-O3",
                "-std=c11",
                "-Wall",
                "-Wextra",
                "-Wno-missing-field-initializers",
            ],
            optional=True,
        )
    ]
)
