//! Input and output: the text parser, file loaders and the report exporters.
