"""Only here so that setuptools runs the cffi build of native/ at install time."""
from setuptools import setup

setup(cffi_modules=["native/build.py:ffibuilder"])
