__version__ = '1.13.0a0'
debug = False
cuda = None
git_version = 'Unknown'
hip = None
