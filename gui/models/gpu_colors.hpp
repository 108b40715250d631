#pragma once
// One colour per GPU, the same in every view (matrix cells, network vertices, timeline
// lanes), so a GPU can be followed from view to view.
#include <QColor>

namespace tessera::gui {

// Hues spread by the golden angle, so neighbouring GPUs (which often own neighbouring tiles)
// get clearly different colours for any GPU count; saturation and value alternate in three
// steps to separate the hues that come close again after many GPUs.
QColor gpu_color(int gpu);

// Blocks with no work (fully masked) are drawn in this grey.
QColor masked_color();

// The colour of a block that is scheduled but not yet done at the slider's time: the GPU's
// colour washed out, so the done blocks stand out.
QColor pending_color(const QColor& gpu_colour);

}  // namespace tessera::gui
