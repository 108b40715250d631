#pragma once
#include <limits>
#define CUDART_INF_F (std::numeric_limits<float>::infinity())
